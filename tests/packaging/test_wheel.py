"""The wheel built from this repository installs into a fresh venv and answers from there.

Builds the wheel offline from a copy of the working tree (so nothing is written into the
checkout), checks what it carries, installs it with ``--no-deps`` into a fresh ``python -m venv``
whose only view of third-party packages is a ``.pth`` line pointing at the current venv's
site-packages (no downloads), and runs the installed ``macaron`` command from a temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "wheels",
    "*.ckpt",
    "out",
)
MUST_CARRY = (
    "macaron_local/bundled/models/*.toml",
    "macaron_local/bundled/hcp_profiles/*.toml",
    "macaron_local/bundled/plugins/__init__.py",
    "macaron_local/tui/__init__.py",
)
FORBIDDEN_TOP = {"tui", "models", "plugins", "hcp_profiles", "tests", "bench"}


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    work: Path  # a temporary folder outside the checkout, used as cwd

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
        }
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        env["MACARON_HOME"] = str(self.work / "home")
        env["PIP_NO_INDEX"] = "1"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env

    def run(self, *cmd: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(c) for c in cmd],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _check(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, (
        f"{done.args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=SKIP)
    _check(
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "-q",
                "-w",
                str(tmp / "dist"),
                str(src),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    )
    wheels = list((tmp / "dist").glob("macaron_local-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("venv")
    inst = Installed(wheel=wheel, venv=tmp / "venv", work=tmp / "work")
    inst.work.mkdir()
    _check(
        subprocess.run(
            [sys.executable, "-m", "venv", str(inst.venv)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    )
    purelib = _check(
        inst.run(inst.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    )
    # third-party dependencies only: the current venv's site-packages, appended after the
    # fresh venv's own (its .pth files, e.g. the editable hook of this checkout, are not run)
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib.stdout.strip(), "_outer_deps.pth").write_text(ours + "\n")
    _check(inst.run(inst.python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel))
    return inst


def test_wheel_carries_the_bundled_folders_under_the_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for pattern in MUST_CARRY:
        assert any(Path(n).match(pattern) for n in names), f"{pattern} missing from {wheel.name}"
    top = {n.split("/", 1)[0] for n in names if "/" in n}
    assert not top & FORBIDDEN_TOP, f"generic top-level packages: {top & FORBIDDEN_TOP}"
    assert {t for t in top if not t.endswith((".dist-info", ".data"))} == {"macaron_local"}


def test_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    probe = (
        "import json, sys, macaron_local, macaron_local.paths as p\n"
        "print(json.dumps({'file': macaron_local.__file__, 'path': sys.path,\n"
        "                  'models': str(p.bundled('models'))}))"
    )
    info = json.loads(_check(installed.run(installed.python, "-c", probe)).stdout)
    venv = installed.venv.resolve()
    assert Path(info["file"]).resolve().is_relative_to(venv)
    assert Path(info["models"]).resolve().is_relative_to(venv)
    assert list(Path(info["models"]).glob("*.toml")), "no model manifests in the installed package"
    on_path = [Path(p).resolve() for p in info["path"] if p]
    assert REPO not in on_path, f"the checkout {REPO} is on sys.path of the fresh venv"
    assert not any(
        p.is_relative_to(REPO) and not p.is_relative_to(REPO / ".venv") for p in on_path
    ), info["path"]


@pytest.mark.slow
def test_macaron_ask_answers_from_the_installed_wheel(installed: Installed) -> None:
    done = _check(installed.run(installed.venv / "bin" / "macaron", "ask", "--json", "hello"))
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(record["answer"], str) and record["answer"].strip(), record
