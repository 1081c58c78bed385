"""A failed task points at the project's code (issue 19, item 6) through the installed rig: the
innermost frame in the project's files, the exception, ``rig logs TASK`` for the rest; with
``RIG_DEBUG=1`` the traceback shows the project's frames first and rig's after."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import run_rig, write_project

CONFIG = """
from rigcli import sequence
from tools import install_pkgs, parse

workflows = sequence("w").task("install", install_pkgs).task("parse", parse)
"""

TOOLS = """import json
import os


def _lookup(table, key):
    return table[key]


def install_pkgs(step):
    if os.environ.get("FAIL") == "install":
        return {"ctx": {"v": _lookup({}, "missing")}}
    return {"ctx": {"v": 1}}


def parse(step):
    return {"ctx": json.loads("not json")}
"""


def _project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "errors", CONFIG, **{"tools.py": TOOLS})


def test_a_failed_task_names_the_innermost_line_of_the_projects_code(tmp_path: Path) -> None:
    project = _project(tmp_path)
    failed = run_rig("apply", cwd=project, env={"FAIL": "install"}, subprocess=True)
    assert failed.returncode == 1
    assert failed.error_lines == [
        "error: Task install failed: KeyError: 'missing' at tools.py:6 in _lookup (the rest: rig logs install)"
    ]
    assert "Traceback" not in failed.stderr  # without RIG_DEBUG, one line

    # The run keeps the same message: the plan's reason shows it later.
    [node, _] = run_rig("--json", "plan", cwd=project).json["nodes"]
    assert node["reason"]["code"] == "previous-run-failed"
    assert "KeyError: 'missing' at tools.py:6 in _lookup" in node["reason"]["detail"]


def test_an_error_raised_in_a_library_points_at_the_project_line_that_called_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    failed = run_rig("apply", cwd=project, subprocess=True)
    assert failed.returncode == 1
    [line] = failed.error_lines
    assert line.startswith("error: Task parse failed: JSONDecodeError: Expecting value")
    assert line.endswith(" at tools.py:16 in parse (the rest: rig logs parse)")


def test_rig_debug_shows_the_projects_frames_first_and_rigs_after(tmp_path: Path) -> None:
    project = _project(tmp_path)
    failed = run_rig("apply", cwd=project, env={"FAIL": "install", "RIG_DEBUG": "1"}, subprocess=True)
    assert failed.returncode == 1
    lines = failed.stderr.splitlines()
    first = lines.index("Traceback, your code first (most recent call last):")
    handler = lines.index(f'  File "{project.resolve() / "tools.py"}", line 11, in install_pkgs')
    helper = lines.index(f'  File "{project.resolve() / "tools.py"}", line 6, in _lookup')
    exception = lines.index("KeyError: 'missing'")
    then = lines.index("Then rig's frames and the libraries' (most recent call last):")
    rig_frames = [number for number, line in enumerate(lines) if line.startswith('  File "') and "rigcli" in line]
    assert first < handler < helper < exception < then < min(rig_frames)
    assert failed.error_lines[-1].endswith("at tools.py:6 in _lookup (the rest: rig logs install)")
