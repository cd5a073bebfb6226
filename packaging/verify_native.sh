#!/usr/bin/env bash
# One-time check: the *native* llama.cpp build works with macaron-local.
#
# Why: `pip install llama-cpp-python==0.3.36` without CMAKE_ARGS compiles with GGML_NATIVE=ON
# (-march=native). That build carries ggml's AMX kernels; on VMs whose cpuid reports AMX that
# the hypervisor does not allow, the first llama_decode dies with SIGSEGV (ldtilecfg -> general
# protection fault). macaron_local.engine._lcpp.load_model turns `use_extra_bufts` off when the
# build reports AMX, so the AMX buffer type is never used and the engine works on that build.
#
# What it does (nothing is installed outside a fresh venv under /tmp, nothing is downloaded):
#   1. a fresh venv; the already built native wheel installed --no-deps; a .pth line that
#      exposes the repo venv's site-packages for the other third-party dependencies (the fresh
#      venv's own llama_cpp, the native one, comes first on sys.path);
#   2. macaron-local installed --no-deps from a wheel built from a copy of the working tree;
#   3. llama.cpp's system_info (AMX expected), a raw `Llama(model)("hi", max_tokens=4)` in a
#      subprocess (expected on an affected VM: killed by SIGSEGV, exit -11);
#   4. `macaron ask --json "hello"` from a temporary folder (expected: an answer). When the build
#      has no AMX (the CPU lacks it, e.g. an AMD EPYC host: -march=native then emits no AMX
#      kernels and nothing crashes), it also runs ask with MACARON_NO_EXTRA_BUFTS=1, which forces
#      the same use_extra_bufts=False load that an AMX build gets.
#
# Usage: packaging/verify_native.sh [NATIVE_WHEEL]   (default: /tmp/wheels/native/*.whl)
# Env:   PYTHON (default: the repo venv's base interpreter), KEEP=1 keeps the temp folder.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTER="$REPO/.venv/bin/python"
WHEEL="${1:-$(ls /tmp/wheels/native/llama_cpp_python-*.whl 2>/dev/null | head -n1)}"
[[ -f "${WHEEL:-}" ]] || { echo "no native wheel found (pass its path)" >&2; exit 2; }
[[ -x "$OUTER" ]] || { echo "the repo venv $OUTER is missing" >&2; exit 2; }
PY="${PYTHON:-$("$OUTER" -c 'import sys; print(sys._base_executable)')}"

TMP="$(mktemp -d /tmp/macaron-native.XXXXXX)"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$TMP"' EXIT
VENV="$TMP/venv"
export MACARON_HOME="$TMP/home" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH VIRTUAL_ENV
ulimit -c 0  # the expected crash should not leave a core file

step() { printf '\n== %s\n' "$*"; }

step "fresh venv $VENV ($("$PY" --version))"
"$PY" -m venv "$VENV"
VPY="$VENV/bin/python"

step "native llama-cpp-python wheel, --no-deps: $(basename "$WHEEL") from $(dirname "$WHEEL")"
"$VPY" -m pip install -q --no-deps "$WHEEL"
SITE="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$OUTER" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$SITE/_outer_deps.pth"
echo "other dependencies via $SITE/_outer_deps.pth -> $(cat "$SITE/_outer_deps.pth")"

step "macaron-local --no-deps (wheel built from a copy of the working tree)"
mkdir -p "$TMP/src" "$TMP/dist"
tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude='*.egg-info' --exclude=./build \
    --exclude=./dist --exclude='__pycache__' --exclude='.pytest_cache' --exclude=./wheels \
    -cf - . | tar -C "$TMP/src" -xf -
"$OUTER" -m pip wheel -q --no-deps --no-build-isolation -w "$TMP/dist" "$TMP/src" \
    >"$TMP/wheel.log" 2>&1 || { cat "$TMP/wheel.log"; exit 1; }
"$VPY" -m pip install -q --no-deps "$TMP"/dist/macaron_local-*.whl

step "llama.cpp in the fresh venv"
"$VPY" - <<'PY'
import llama_cpp, macaron_local
from macaron_local.engine import _lcpp
print("llama_cpp   ", llama_cpp.__file__)
print("macaron     ", macaron_local.__file__)
info = _lcpp.system_info().strip()
print("system_info ", info)
amx = _lcpp.build_has_amx()
print("AMX in build:", amx, "-> the engine loads with use_extra_bufts=False" if amx else
      "-> this CPU has no AMX, so the native build has none: the crash cannot happen here and "
      "the engine keeps the extra buffer types (MACARON_NO_EXTRA_BUFTS=1 forces them off)")
PY
AMX="$("$VPY" -c 'from macaron_local.engine import _lcpp; print(int(_lcpp.build_has_amx()))')"

MODEL="$(cd "$TMP" && "$VPY" -c 'from macaron_local.manifests import embedded_model_file as f; print(f())')"
echo "model        $MODEL"

step "raw llama_cpp.Llama(model)(\"hi\", max_tokens=4) with default parameters, in a subprocess"
"$VPY" - "$MODEL" <<'PY'
import subprocess, sys
code = ("import sys; from llama_cpp import Llama; llm = Llama(sys.argv[1], verbose=False); "
        "print(repr(llm('hi', max_tokens=4)['choices'][0]['text']))")
done = subprocess.run([sys.executable, "-c", code, sys.argv[1]], capture_output=True, text=True)
rc = done.returncode
what = "killed by SIGSEGV" if rc == -11 else ("ok" if rc == 0 else "failed")
print(f"exit {rc} ({what}; -11 is expected only where the build has AMX and the CPU faults)")
if done.stdout.strip():
    print("stdout:", done.stdout.strip()[-300:])
if rc != 0 and done.stderr.strip():
    print("stderr tail:", done.stderr.strip()[-300:])
PY

ask() {  # $1: label; remaining: extra environment assignments
    local label="$1"; shift
    step "macaron ask --json \"hello\" [$label] (cwd $TMP/work, MACARON_HOME $MACARON_HOME)"
    mkdir -p "$TMP/work"
    local out rc
    set +e
    out="$(cd "$TMP/work" && env "$@" "$VENV/bin/macaron" ask --json "hello" 2>"$TMP/ask.err")"
    rc=$?
    set -e
    echo "exit $rc"
    echo "$out"
    if [[ $rc -eq 0 ]] && "$VPY" -c 'import json, sys
a = json.loads(sys.argv[1].strip().splitlines()[-1])["answer"]
sys.exit(0 if a.strip() else 1)' "$out"; then
        echo "RESULT [$label]: macaron answers on the native build"
    else
        echo "RESULT [$label]: FAILED"; tail -n 20 "$TMP/ask.err"; exit 1
    fi
}

if [[ "$AMX" == 1 ]]; then
    ask "AMX build: extra buffer types turned off by _lcpp.load_model"
else
    ask "no AMX in this build: default load"
    ask "use_extra_bufts=False forced (the AMX code path)" MACARON_NO_EXTRA_BUFTS=1
fi
