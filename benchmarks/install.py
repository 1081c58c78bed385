"""Which rig a run times: a regular install in a venv of its own (as users get it), or the one beside this interpreter.

A development checkout is usually an editable install, whose import finder runs in every
process of that venv: it makes ``python -c pass`` about twice as slow here and ``rig --version``
~1.2×, so ratios measured there say little about what users see. ``regular()`` builds a wheel
from this checkout (working tree included), installs it into a venv of its own, and times that
``rig`` against that venv's ``python -c pass``. The venv's dependencies are installed once and
kept under the cache directory (keyed by the interpreter and the dependency list); rig itself
is reinstalled on every run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.fixtures import REPO_ROOT, SETUP_TIMEOUT_S, SetupError, base_env, beside_this_interpreter

KINDS = ("regular", "editable")
_SOURCES = ("pyproject.toml", "README.md", "bin", "rigcli", "providers")


@dataclass(frozen=True)
class Installation:
    """A rig to time and the interpreter whose ``python -c pass`` is its baseline."""

    kind: str  # "regular" (a wheel in a venv of its own) or "editable" (the rig beside this interpreter)
    python: str
    rig: tuple[str, ...]


def editable() -> Installation:
    """The rig installed beside this interpreter (in a checkout, an editable install)."""
    return Installation("editable", sys.executable, tuple(beside_this_interpreter()))


def default_cache() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rig-benchmarks"


def regular(cache: Path, log: Callable[[str], None]) -> Installation:
    """This checkout built as a wheel and installed (not editable) into its own venv under ``cache``."""
    dependencies = _dependencies()
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    known = dependencies or pyproject  # without tomllib, any change to pyproject.toml means a fresh venv
    key = hashlib.sha256(json.dumps([sys.version, sys.executable, known]).encode()).hexdigest()[:16]
    venv = cache / f"venv-{key}"
    python = venv / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with _locked(cache / f"venv-{key}.lock"):
        if not (venv / ".dependencies-installed").is_file():
            log(f"  installing rig's dependencies into {venv} (once per dependency list)")
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)])
            if dependencies:
                _run([str(python), "-m", "pip", "install", "-q", *dependencies])
            (venv / ".dependencies-installed").write_text(json.dumps(known) + "\n", encoding="utf-8")
        with tempfile.TemporaryDirectory(prefix="rig-wheel-") as scratch:
            log("  building rig's wheel from this checkout and installing it (not editable)")
            wheel = _build_wheel(Path(scratch))
            if dependencies:
                _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)])
            else:
                _run(
                    [
                        str(python),
                        "-m",
                        "pip",
                        "install",
                        "-q",
                        "--force-reinstall",
                        f"rig[postgres] @ {wheel.as_uri()}",
                    ]
                )
    rig = venv / "bin" / "rig"
    if not rig.is_file():
        raise SetupError(f"the regular install left no rig at {rig}")
    return Installation("regular", str(python), (str(rig),))


def _dependencies() -> list[str]:
    """``[project] dependencies`` plus the ``postgres`` extra (the PostgreSQL rows need psycopg)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: pip reads pyproject.toml itself, from the wheel's metadata
        return []
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["postgres"]]


def _build_wheel(scratch: Path) -> Path:
    """A wheel of the working tree, built in a copy so the checkout gets no build/ or *.egg-info."""
    source = scratch / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in _SOURCES:
        path = REPO_ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    dist = scratch / "dist"
    argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(source)]
    try:  # this interpreter's setuptools builds it without a network round trip
        _run([*argv[:4], "--no-build-isolation", *argv[4:]])
    except SetupError:
        _run(argv)
    wheels = sorted(dist.glob("rig-*.whl"))
    if not wheels:
        raise SetupError(f"pip wheel produced no rig wheel in {dist}")
    return wheels[-1]


def _run(argv: list[str]) -> None:
    try:
        done = subprocess.run(
            argv, env=base_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SETUP_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise SetupError(f"timed out after {SETUP_TIMEOUT_S:g} s: {' '.join(argv[:5])}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip() and "WARNING" not in line] or ["?"]
        raise SetupError(f"{' '.join(argv[:5])} failed: {lines[-1].strip()[:200]}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One run at a time installs into a cached venv (two suites may start together)."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


__all__ = ["KINDS", "Installation", "default_cache", "editable", "regular"]
