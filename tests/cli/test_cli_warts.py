"""Newcomer warts (issue 19, item 8) through the installed rig: help that wraps instead of cutting,
``rig completion install`` in real bash, zsh and fish, ``rig init --template``, a second
``rig init``, ``rig projects`` with hundreds of entries, ``rig providers nope clear``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, RIG_BIN_DIR, env_with_rig, run_rig


def _shell_env(extra: dict[str, str]) -> dict[str, str]:
    """A fresh login's environment in a temp HOME: no XDG or ZDOTDIR from the one running the tests."""
    env = {key: value for key, value in env_with_rig(extra).items() if not key.startswith(("XDG_", "ZDOTDIR"))}
    env["PATH"] = f"{RIG_BIN_DIR}:/usr/bin:/bin"
    return env


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("columns", ["40", "60", "200"])
def test_help_wraps_every_description_and_never_cuts_one(tmp_path: Path, columns: str) -> None:
    described = run_rig("help", "--json", cwd=tmp_path).json["commands"]
    shown = run_rig("--help", cwd=tmp_path, env={"COLUMNS": columns}, subprocess=True)
    assert shown.returncode == 0, shown
    assert "…" not in shown.stdout and "..." not in shown.stdout.replace("[ARGS]...", "")
    flowing = _words(shown.stdout)
    for command in described:
        assert _words(command["description"]) in flowing, (columns, command)


@pytest.mark.parametrize(
    ("shell", "check"),
    [
        ("bash", ["bash", "-i", "-c", "complete -p rig"]),
        ("zsh", ["zsh", "-i", "-c", "print -r -- ${_comps[rig]}"]),
        ("fish", ["fish", "-c", "complete -C 'rig vers'"]),
    ],
)
def test_completion_install_works_in_a_real_shell(tmp_path: Path, shell: str, check: list[str]) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "SHELL": f"/usr/bin/{shell}"}
    before = subprocess.run(check, env=_shell_env(env), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert "rig" not in before.stdout and "_rig" not in before.stdout  # nothing there yet

    installed = subprocess.run(
        [RIG, "completion", "install"], env=_shell_env(env), capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert installed.returncode == 0, installed
    assert installed.stdout.startswith(f"Installed {shell} completion: wrote {home}/")
    rerun = [RIG, "--json", "completion", "install", shell]
    again = subprocess.run(rerun, env=_shell_env(env), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert again.returncode == 0, again
    document = json.loads(again.stdout)
    assert document["shell"] == shell and Path(document["script_path"]).is_file()
    assert document["startup_file_updated"] is False  # installing twice adds nothing twice
    if document["startup_file"]:
        assert Path(document["startup_file"]).read_text().count("# rig completion") == 1

    after = subprocess.run(check, env=_shell_env(env), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    expected = {"bash": "complete -F _rig_complete rig", "zsh": "_rig", "fish": "version\tPrint the version."}
    assert expected[shell] in after.stdout.splitlines(), after


def test_init_templates_say_what_they_use(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    docker = run_rig("init", "--template", "docker", cwd=tmp_path / "d", subprocess=True)
    assert docker.returncode == 0, docker
    assert "uses the LOCAL image busybox (or $RIG_DOCKER_IMAGE) and never pulls it" in docker.stdout
    config = (tmp_path / "d" / "rig_config.py").read_text()
    assert 'define_provider("docker", image=env("RIG_DOCKER_IMAGE", "busybox"))' in config
    assert "rig never pulls" in config

    local = run_rig("--json", "init", cwd=tmp_path, subprocess=True)  # the default template
    assert local.returncode == 0, local
    assert local.json["created"] == {"config": True, "gitignore": True}
    assert 'define_provider("local")' in (tmp_path / "rig_config.py").read_text()
    assert run_rig("plan", cwd=tmp_path).returncode == 0

    unknown = run_rig("init", "--template", "vagrant", cwd=tmp_path / "d", subprocess=True)
    assert unknown.returncode == 2 and "'vagrant' is not one of 'local', 'docker'" in unknown.stderr


def test_a_second_init_says_what_exists_and_how_to_start_over(tmp_path: Path) -> None:
    assert run_rig("init", cwd=tmp_path).returncode == 0
    assert run_rig("apply", cwd=tmp_path).returncode == 0  # now there is state too
    again = run_rig("init", cwd=tmp_path, subprocess=True)
    config, state = tmp_path.resolve() / "rig_config.py", tmp_path.resolve() / ".rig"
    assert again.returncode == 1
    assert again.error_lines == [
        f"error: {config} already exists: this is a rig project and its state in {state}; rig init never "
        f"overwrites. To start over: rm {config}; rm -r {state}; rig init (or edit it and run rig plan)"
    ]


def test_projects_with_hundreds_of_entries_stay_readable(tmp_path: Path) -> None:
    for number in range(1, 251):
        (tmp_path / f"proj-{number}" / "src").mkdir(parents=True)
        (tmp_path / f"proj-{number}" / "rig_config.py").write_text("workflows = []\n")
    for number in range(300):
        (tmp_path / "noise" / f"dir-{number}").mkdir(parents=True)
    listed = run_rig("projects", cwd=tmp_path, env={"COLUMNS": "80"}, subprocess=True)
    assert listed.returncode == 0, listed
    lines = listed.stdout.splitlines()
    assert lines[0] == f"250 rig projects at or below {tmp_path.resolve()}"
    rows = [line.split() for line in lines[3:]]
    assert rows[:3] == [["proj-1", "rig_config.py"], ["proj-2", "rig_config.py"], ["proj-3", "rig_config.py"]]
    assert rows[-1] == ["proj-250", "rig_config.py"] and len(rows) == 250
    assert max(len(line) for line in lines[1:]) <= 80  # one short line per project, whatever the depth
    assert len(run_rig("--json", "projects", cwd=tmp_path).json["projects"]) == 250


def test_clearing_an_unknown_provider_is_an_error(tmp_path: Path) -> None:
    unknown = run_rig("providers", "nope", "clear", cwd=tmp_path, subprocess=True)
    assert unknown.returncode == 1
    [line] = unknown.error_lines
    assert re.fullmatch(
        r"error: Unknown provider nope: it is not installed and has no per-user state \(installed: .*local.*\)", line
    ), line
    known = run_rig("providers", "docker", "clear", cwd=tmp_path, subprocess=True)
    assert known.returncode == 0 and known.stdout == "No docker provider state to clear.\n"
