"""A signal whatever instant it lands at — in rig's own imports, a plugin's or the project's — ends
the command 128 + its number with the one line ``interrupted``: never exit 3, never another error.

The instants that used to go wrong are made exact: project or plugin code sends the signal to rig
itself from inside a ``__set_name__`` (where Python wraps whatever it raises in a RuntimeError),
or catches it and carries on. Random instants over whole commands are ``tests/hostile/instants.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]

# Sends SIGNUM to rig from a descriptor's __set_name__ while a class body is made; a few bytecodes
# follow, so Python runs rig's handler there, inside type.__new__.
LANDING = """
import os


class Landing:
    def __set_name__(self, owner, name):
        os.kill(os.getpid(), int(os.environ["SIGNUM"]))
        for _ in range(1000):
            pass


class Settings:
    field = Landing()
"""

CONFIG_WITH_LANDING = (
    LANDING
    + """
from rigcli import sequence

workflows = sequence("w").task("a", lambda step: {"ctx": {"a": 1}})
"""
)

# Project code that swallows the interrupt and goes on as if nothing happened.
CONFIG_SWALLOWING = """
import os

from rigcli import sequence

try:
    os.kill(os.getpid(), int(os.environ["SIGNUM"]))
    for _ in range(1000):
        pass
except BaseException:
    pass

workflows = sequence("w").task("a", lambda step: {"ctx": {"a": 1}})
"""

CONFIG_WITH_PLUGIN = """
from rigcli import define_provider, workflow

app = workflow("plugged", providers={"acme": define_provider("acme")})
workflows = app.sequence("root").task("a", lambda step, acme: {"ctx": {"a": 1}})
"""

PLUGIN = (
    LANDING
    + """

class Plugin:
    provider_id = "acme"

    def create_provider(self, setup):
        raise AssertionError("never reached")


plugin = Plugin()
"""
)


def _rig(project: Path, signum: int, *args: str, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = env_with_rig({"SIGNUM": str(int(signum)), "RIG_HOME": str(project.parent / "home")})
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    return subprocess.run(
        [RIG, *args], cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def _interrupted(done: subprocess.CompletedProcess[str], signum: int) -> None:
    assert (done.returncode, done.stderr.splitlines()) == (128 + signum, ["error: interrupted"]), done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("command", [["plan"], ["--json", "apply"], ["ls"]], ids=" ".join)
def test_a_signal_inside_a_class_body_of_the_config_is_an_interrupt(
    tmp_path: Path, signum: signal.Signals, command: list[str]
) -> None:
    project = write_project(tmp_path / "project", CONFIG_WITH_LANDING)
    _interrupted(_rig(project, signum, *command), signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_signal_the_config_swallows_still_ends_the_command_interrupted(
    tmp_path: Path, signum: signal.Signals
) -> None:
    project = write_project(tmp_path / "project", CONFIG_SWALLOWING)
    _interrupted(_rig(project, signum, "apply"), signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_a_plugin_is_imported_is_no_failed_plugin(tmp_path: Path, signum: signal.Signals) -> None:
    project, site = write_project(tmp_path / "project", CONFIG_WITH_PLUGIN), tmp_path / "site"
    site.mkdir()
    (site / "acme_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = site / "acme_rig-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rig\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[rig.providers]\nacme = acme_plugin:plugin\n", encoding="utf-8")
    _interrupted(_rig(project, signum, "plan", site=site), signum)
