"""The connect commands reach a running docker workspace without the config or the engine once a load has
kept what the config says of its provider in rig's cache (as rig exec does), and go the engine's way
whenever that cannot answer: a stopped container (started first, and said), a changed rig_config.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import imported_by_rig
from tests.providers.connect.conftest import Reached

FULL = {"rigcli.engine.facade", "rigcli.config_loader", "rigcli.engine.project"}


def _imports(reached: Reached, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", *args],
        cwd=reached.project,
        env=reached.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, imported_by_rig(done.stderr)


def test_cp_and_the_proxy_skip_the_engine_once_cached(docker_reached: Reached, tmp_path: Path) -> None:
    reached = docker_reached
    assert reached.rig("cp", "dev:/greeting.txt", str(tmp_path / "first.txt")).returncode == 0  # remembers
    done, loaded = _imports(reached, "cp", "dev:/greeting.txt", str(tmp_path / "cached.txt"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "cached.txt").read_text() == "hello\n"
    assert not loaded & FULL, sorted(loaded & FULL)
    _, loaded = _imports(reached, "ssh-proxy", "dev")  # stdin at its end: the client is gone at once
    assert "asyncssh" in {name.split(".")[0] for name in loaded}
    assert not loaded & FULL, sorted(loaded & FULL)
    # A changed config: the remembered definition may be stale, so the full way answers (and remembers).
    config = reached.project / "rig_config.py"
    config.write_text(config.read_text() + "\n# changed\n")
    done, loaded = _imports(reached, "cp", "dev:/greeting.txt", str(tmp_path / "full.txt"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert loaded & FULL
