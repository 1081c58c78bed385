"""asyncssh (and cryptography under it) loads only for the connect commands: `rig --version`, `rig plan`,
`rig ls` and `rig exec` never import it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.cli_support import env_with_rig, write_project
from tests.helpers import imported_by_rig
from tests.providers.connect.conftest import LOCAL

HEAVY = {"asyncssh", "cryptography", "rigcli.connect"}


def _imports(args: list[str], cwd: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", *args],
        cwd=cwd,
        env=env_with_rig({"RIG_HOME": str(cwd / "home")}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        name.split(".")[0] if name.startswith(("asyncssh", "cryptography")) else name
        for name in imported_by_rig(done.stderr)
    }


def test_no_connect_module_on_other_commands(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", LOCAL)
    for args in (["--version"], ["plan"], ["ls", "--no-probe"], ["apply"], ["exec", "dev", "--", "true"]):
        if args[0] == "exec":
            assert (
                subprocess.run(
                    [sys.executable, "-m", "rigcli", "fork", "dev"],
                    cwd=project,
                    env=env_with_rig({"RIG_HOME": str(project / "home")}),
                    capture_output=True,
                    timeout=120,
                ).returncode
                == 0
            )
        loaded = _imports(args, project)
        assert not loaded & HEAVY, (args, sorted(loaded & HEAVY))


def test_the_connect_commands_do_load_it(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", LOCAL)
    env = env_with_rig({"RIG_HOME": str(project / "home")})
    forked = subprocess.run([sys.executable, "-m", "rigcli", "fork", "dev"], cwd=project, env=env, timeout=120)
    assert forked.returncode == 0
    loaded = _imports(["ssh-config", "--json"], project)
    assert {"asyncssh", "rigcli.connect"} <= loaded
