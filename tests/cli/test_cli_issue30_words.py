"""Issue 30's wording through the installed rig: diff and plan word a change alike, fork says fork, option
errors in rig's words, plurals, rm's final status, timestamps to the second, and doctor's providers."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import DEV_CONFIG, Result, run_rig, write_project


def rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env={"NO_COLOR": "1", "RIG_RENDER": "0", **(env or {})}, subprocess=True)


def ok(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = rig(project, *args, env=env)
    assert result.returncode == 0, result
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "dev", DEV_CONFIG)


@pytest.fixture
def forked(project: Path) -> Path:
    ok(project, "fork", "a")
    return project


def test_diff_words_a_changed_task_as_plan_does(forked: Path) -> None:
    config = forked / "rig_config.py"
    config.write_text(config.read_text().replace('"tools": ["git"]', '"tools": ["git", "hg"]'), encoding="utf-8")
    planned = {node["path"]: node["reason"] for node in ok(forked, "--json", "plan").json["nodes"]}
    [change] = ok(forked, "--json", "diff", "a").json["changes"]
    assert change["path"] == "tools"
    assert change["reason"] == planned["tools"]
    assert change["reason"]["message"] == "handler tools (rig_config.py) changed"
    human = ok(forked, "diff", "a").stdout
    assert "handler tools (rig_config.py) changed" in human, human


def test_fork_without_a_name_says_fork(project: Path) -> None:
    result = rig(project, "fork")
    assert result.returncode == 2, result
    assert result.error_lines == ["error: fork requires a workspace name: rig fork NAME"], result
    assert "create" not in result.stderr


def test_option_errors_never_show_pydantic_prefixes_or_python_types(forked: Path) -> None:
    bad_input = rig(forked, "op", "a", "test", "--scope", "unit")
    assert bad_input.returncode == 1, bad_input  # invalid input is a validation error
    assert len(bad_input.error_lines) == 1 and "scope must start with test:" in bad_input.stderr, bad_input
    assert "Value error" not in bad_input.stderr
    for ttl in ("abc", "5q"):
        result = rig(forked, "fork", "b", "--ttl", ttl)
        assert result.returncode == 2, result
        assert len(result.error_lines) == 1 and "--ttl" in result.stderr, result
        assert "timedelta" not in result.stderr
    assert ok(forked, "--json", "ls", "--no-probe").json["workflows"][0]["workspaces"][0]["name"] == "a"


ONE_LINE_GAP = """
from rigcli import define_provider, workflow

app = workflow("talk", providers={"box": define_provider("local")})


def talk(step, box):
    machine = box.create_machine()
    machine.exec("for i in 1 2 3 4 5 6; do echo talk-line-$i; done", name="count")
    machine.delete()
    return {"ctx": {}}


workflows = app.sequence("talk").task("talk", talk)
"""


def test_counted_lines_are_singular_for_one(tmp_path: Path) -> None:
    project = write_project(tmp_path / "talk", ONE_LINE_GAP)
    result = run_rig("--progress", "tty", "apply", cwd=project, subprocess=True, env={"TERM": "xterm-256color"})
    assert result.returncode == 0, result
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.stderr)
    assert re.search(r"… 1 line\b", plain), plain
    assert not re.search(r"\b1 lines\b", plain), plain


def test_rm_json_reports_the_final_status(project: Path) -> None:
    for name in ("a", "b", "c", "d"):
        ok(project, "fork", name)
    one = ok(project, "--json", "rm", "a", "--yes").json
    assert (one["name"], one["status"]) == ("a", "removed")
    several = ok(project, "--json", "rm", "b", "c", "--yes").json
    assert [(item["name"], item["status"]) for item in several["removed"]] == [("b", "removed"), ("c", "removed")]
    everything = ok(project, "--json", "rm", "--all", "--yes").json
    assert [(item["name"], item["status"]) for item in everything["removed"]] == [("d", "removed")]


def test_human_output_shows_timestamps_to_the_second(forked: Path) -> None:
    ok(forked, "fork", "brief", "--ttl", "1s")
    time.sleep(1.5)
    dry = ok(forked, "reap", "--dry-run")
    done = ok(forked, "reap")
    for text in (dry.stdout + dry.stderr, done.stdout + done.stderr):
        assert "expired at" in text, text
        assert not re.search(r"\d\d:\d\d:\d\d\.\d", text), text  # no fraction of a second
        assert "T" not in re.findall(r"expired at (\S+ \S+)", text)[0], text


def test_doctor_shows_only_the_providers_the_project_uses(project: Path, tmp_path: Path) -> None:
    outside = ok(tmp_path, "doctor").stdout
    assert re.search(r"^docker\s", outside, re.MULTILINE), outside  # outside a project: every installed one
    inside = ok(project, "doctor").stdout  # the project uses no provider
    assert not re.search(r"^(docker|swarm)\s", inside, re.MULTILINE), inside
    local = write_project(tmp_path / "talk", ONE_LINE_GAP)
    used = ok(local, "doctor").stdout
    assert not re.search(r"^(docker|swarm)\s", used, re.MULTILINE), used
