"""The remembered ``rig.providers`` entry points: installs, upgrades and removals are seen at once.

A plugin distribution is installed the way pip lays one out (a ``*.dist-info`` directory with
``entry_points.txt`` beside its module) into a directory on ``PYTHONPATH``, and rig runs as a
real process each time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.cli_support import env_with_rig

_CONFIG = """
import sys

from rigcli import define_provider, workflow

app = workflow("plugged", providers={"acme": define_provider("acme")})


def greet(acme):
    return {"ctx": {"greeting": acme.greeting(), "scanned": "importlib.metadata" in sys.modules}}


workflows = app.sequence("root").task("greet", greet, cache_ttl=0)
"""

_PLUGIN = """
class Runtime:
    def greeting(self):
        return {greeting!r}


class Controller:
    provider_id = "acme"

    def runtime(self, context):
        return Runtime()


class Plugin:
    provider_id = "acme"

    def create_provider(self, setup):
        return Controller()


plugin = Plugin()
"""


def _install(site: Path, module: str, greeting: str, *, version: str = "1.0") -> None:
    """Lay out distribution ``acme-rig`` as pip would, its entry point naming ``module:plugin``."""
    (site / f"{module}.py").write_text(textwrap.dedent(_PLUGIN.format(greeting=greeting)), encoding="utf-8")
    for old in site.glob("acme_rig-*.dist-info"):
        for item in old.iterdir():
            item.unlink()
        old.rmdir()
    info = site / f"acme_rig-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: acme-rig\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[rig.providers]\nacme = {module}:plugin\n", encoding="utf-8")


def _rig(project: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_with_rig({"RIG_HOME": str(project / "_home"), "PYTHONDONTWRITEBYTECODE": "1"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "rigcli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, site = tmp_path / "project", tmp_path / "site"
    project.mkdir()
    site.mkdir()
    (project / "rig_config.py").write_text(textwrap.dedent(_CONFIG), encoding="utf-8")
    return project, site


def _greeting(completed: subprocess.CompletedProcess[str]) -> object:
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["context"]["greeting"]


def test_plugins_installed_upgraded_or_removed_after_a_run_are_seen_at_once(tmp_path: Path) -> None:
    project, site = _project(tmp_path)
    missing = _rig(project, site, "--json", "apply")
    assert missing.returncode == 1
    assert "Provider acme is not installed" in missing.stderr

    _install(site, "acme_one", "hello")
    assert _greeting(_rig(project, site, "--json", "apply")) == "hello"

    # An upgrade that moves the plugin to another module (a new dist-info, as pip writes it).
    _install(site, "acme_two", "bonjour", version="2.0")
    assert _greeting(_rig(project, site, "--json", "apply")) == "bonjour"

    # entry_points.txt edited in place (an egg-info or a hand-made layout): seen too.
    (site / "acme_rig-2.0.dist-info" / "entry_points.txt").write_text(
        "[rig.providers]\nacme = acme_one:plugin\n", encoding="utf-8"
    )
    assert _greeting(_rig(project, site, "--json", "apply")) == "hello"

    for item in (site / "acme_rig-2.0.dist-info").iterdir():
        item.unlink()
    (site / "acme_rig-2.0.dist-info").rmdir()
    removed = _rig(project, site, "--json", "apply")
    assert removed.returncode == 1
    assert "Provider acme is not installed" in removed.stderr


def test_a_remembered_index_spares_reading_every_installed_package(tmp_path: Path) -> None:
    project, site = _project(tmp_path)
    _install(site, "acme_one", "hello")
    first = _rig(project, site, "--json", "apply")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["context"] == {"greeting": "hello", "scanned": True}
    index = project / "_home" / "cache" / "provider-entry-points.json"
    assert json.loads(index.read_text(encoding="utf-8"))["groups"]["rig.providers"]["acme"] == "acme_one:plugin"

    # The first run read every installed package's metadata; the next ones read the index.
    again = _rig(project, site, "--json", "apply")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["context"] == {"greeting": "hello", "scanned": False}
    index.unlink()
    rescanned = _rig(project, site, "--json", "apply")
    assert json.loads(rescanned.stdout)["context"] == {"greeting": "hello", "scanned": True}
    assert index.exists()


def test_a_damaged_index_is_ignored_and_rewritten(tmp_path: Path) -> None:
    project, site = _project(tmp_path)
    _install(site, "acme_one", "hello")
    index = project / "_home" / "cache" / "provider-entry-points.json"
    index.parent.mkdir(parents=True)
    for damaged in ("{not json", json.dumps({"key": "x", "groups": {"rig.providers": {"acme": 3}}}), "[]"):
        index.write_text(damaged, encoding="utf-8")
        assert _greeting(_rig(project, site, "--json", "apply")) == "hello"
        assert json.loads(index.read_text(encoding="utf-8"))["groups"]["rig.providers"]["acme"] == "acme_one:plugin"


def test_a_home_that_cannot_be_written_still_finds_plugins(tmp_path: Path) -> None:
    project, site = _project(tmp_path)
    _install(site, "acme_one", "hello")
    (project / "_home").mkdir()
    (project / "_home" / "cache").write_text("a file where the cache directory would go", encoding="utf-8")
    assert _greeting(_rig(project, site, "--json", "apply")) == "hello"
