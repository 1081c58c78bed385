"""A hostile project's edges: provider checks that leak or raise, escapes in names and results,
exceptions that cannot be printed, and atexit output around the JSON document."""

from __future__ import annotations

import io
import sqlite3
import uuid
from pathlib import Path

import pexpect
import pytest

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, write_project

TITLE = "\x1b]0;pwned\x07"  # retitles the terminal window

EDGES_CONFIG = r"""
import atexit, os

from rigcli import define_provider, define_config, secret, sequence


class Plugin:
    provider_id = "vault"

    def create_provider(self, setup):
        token = setup.config["token"]

        class Controller:
            provider_id = "vault"

            def runtime(self, context):
                return token

            def checks(self, mode, **_):
                if os.environ.get("EDGE_CHECKS_RAISE"):
                    raise RuntimeError("the vault is sealed")
                return [{"id": "token", "label": "token", "status": "ok", "value": "token " + token}]

        return Controller()


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no string for you")


class Fatal(BaseException):
    pass


def task(step, vault):
    kind = os.environ.get("EDGE_RAISE")
    if kind == "unprintable":
        raise Unprintable()
    if kind == "base":
        raise Fatal("a BaseException subclass")
    if kind == "generator-exit":
        raise GeneratorExit()
    if kind == "escape":
        raise RuntimeError("boom \x1b]0;pwned\x07 \x1b[2J")
    if os.environ.get("EDGE_ATEXIT"):
        atexit.register(lambda: print("printed at exit"))
        atexit.register(lambda: os.write(1, b"written at exit\n"))


def create(workflow, workspace):
    if os.environ.get("EDGE_ATEXIT"):
        atexit.register(lambda: print("printed at exit"))
    return {"ok": True}


def remove(workflow, workspace):
    if os.environ.get("EDGE_ATEXIT"):
        atexit.register(lambda: print("printed at exit"))


def title(workflow):
    if os.environ.get("EDGE_RAISE") in ("unprintable", "base", "generator-exit"):
        task(None, None)  # an operation raises what a task can
    if os.environ.get("EDGE_ATEXIT"):
        atexit.register(lambda: print("printed at exit"))
    return "result \x1b]0;pwned\x07 \x1b[2J done"


providers = {"vault": define_provider("vault", plugin=Plugin(), token=secret("EDGE_TOKEN"))}
workflows = define_config(
    workflows=[
        sequence("edges").task("task", task, cache_ttl=0).workspace(create=create, remove=remove)
        .operation("title", run=title),
        sequence("esc\x1b]0;pwned\x07").task("named\x1b]0;pwned\x07", lambda step: None),
    ],
    providers=providers,
)
"""


@pytest.fixture
def edges(tmp_path: Path) -> Path:
    return write_project(tmp_path / "edges", EDGES_CONFIG)


@pytest.fixture
def token() -> str:
    return f"tok-{uuid.uuid4().hex}"


def _rig(project: Path, *args: str, token: str, **env: str) -> Result:
    return run_rig(*args, cwd=project, env={"EDGE_TOKEN": token, "RIG_RENDER": "0", **env}, subprocess=True)


def test_a_provider_checks_value_is_masked_in_the_human_plan_table(edges: Path, token: str) -> None:
    human = _rig(edges, "--workflow", "edges", "plan", token=token)
    assert human.returncode == 0, human
    assert "token ***" in human.stdout, human
    assert token not in human.stdout + human.stderr


@pytest.mark.parametrize("args", [["plan"], ["apply"], ["--json", "apply"], ["--json", "plan"]])
def test_a_provider_whose_checks_raise_is_its_error_exit_1_naming_the_provider(
    edges: Path, token: str, args: list[str]
) -> None:
    result = _rig(edges, "--workflow", "edges", *args, token=token, EDGE_CHECKS_RAISE="1")
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.error_lines == [result.stderr.strip()], result  # one line, nothing else
    assert "Provider vault checks failed: RuntimeError: the vault is sealed" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize(
    ("kind", "shown"),
    [
        ("unprintable", "Unprintable"),
        ("base", "Fatal: a BaseException subclass"),
        ("generator-exit", "GeneratorExit"),
    ],
)
@pytest.mark.parametrize("json_mode", [False, True])
def test_a_handler_raising_what_cannot_be_printed_or_a_base_exception_fails_its_run_in_one_line(
    edges: Path, token: str, kind: str, shown: str, json_mode: bool
) -> None:
    args = ["--json"] if json_mode else []
    for command in (["apply"], ["op", "title"]):
        result = _rig(edges, *args, "--workflow", "edges", *command, token=token, EDGE_RAISE=kind)
        assert result.returncode == 1, result
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
        assert len(result.error_lines) == 1 and shown in result.error_lines[0], result
        assert result.stdout == ""
    with sqlite3.connect(edges / ".rig" / "state.sqlite") as db:
        runs = db.execute("SELECT status, error FROM workflow_node_runs").fetchall()
    assert [status for status, _ in runs] == ["failed"], runs  # recorded failed, never left running
    assert shown in runs[0][1]


@pytest.mark.parametrize(
    ("raised", "shown"),
    [
        (
            "class Unprintable(Exception):\n    def __str__(self):\n        raise ValueError()\nraise Unprintable()",
            "Unprintable",
        ),
        ("class Fatal(BaseException):\n    pass\nraise Fatal('at import')", "Fatal: at import"),
        ("raise GeneratorExit()", "GeneratorExit"),
    ],
)
def test_a_config_raising_what_cannot_be_printed_or_a_base_exception_is_one_line_exit_1(
    tmp_path: Path, raised: str, shown: str
) -> None:
    project = write_project(tmp_path / "raising", raised + "\n")
    result = run_rig("plan", cwd=project, subprocess=True)
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    assert len(result.error_lines) == 1 and shown in result.error_lines[0], result


def test_rig_init_where_gitignore_is_a_directory_is_one_line_exit_1(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").mkdir()
    result = run_rig("init", cwd=tmp_path, subprocess=True)
    assert result.returncode == 1, result
    assert len(result.error_lines) == 1 and ".gitignore" in result.error_lines[0], result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_atexit_output_of_project_code_never_follows_the_json_document(edges: Path, token: str) -> None:
    env = {"EDGE_ATEXIT": "1"}
    for args in (
        ["--json", "--workflow", "edges", "apply"],
        ["--json", "--workflow", "edges", "fork", "dev"],
        ["--json", "--workflow", "edges", "op", "title"],
        ["--json", "rm", "dev", "--yes"],
    ):
        result = _rig(edges, *args, token=token, **env)
        assert result.returncode == 0, result
        result.json  # noqa: B018  # exactly one document: anything after it would not parse
        assert "printed at exit" in result.stderr, result  # it went somewhere: to stderr


def _in_terminal(project: Path, *args: str, token: str) -> tuple[int, str]:
    env = env_with_rig({"EDGE_TOKEN": token, "TERM": "xterm-256color", "EDGE_RAISE": "escape"})
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(RIG, list(args), cwd=str(project), env=env, encoding="utf-8", timeout=60, dimensions=(40, 99))
    seen = io.StringIO()
    child.logfile_read = seen
    if child.expect(["Choose", pexpect.EOF]) == 0:  # several workflows: the picker lists their names
        child.sendline("2")
        child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus or 0, seen.getvalue()


@pytest.mark.parametrize(
    ("args", "code", "seen"),
    [
        (["--workflow", "edges", "apply"], 1, "boom"),
        (["--workflow", "edges", "op", "title"], 0, "result"),
        (["rm", "\x1b]0;pwned\x07", "--yes"], 1, "error:"),
        (["--workflow", "edges", "fork", "a\x1b]0;pwned\x07"], 1, "error:"),
        (["--workflow", "edges", "cache", "invalidate", "\x1b]0;pwned\x07"], 1, "error:"),
        (["op", "\x1b]0;pwned\x07", "title"], 1, "error:"),
        (["--workflow", "esc\x1b]0;pwned\x07", "plan"], 0, "named"),
        (["plan"], 0, "esc"),  # picked from a terminal: the picker shows the names
    ],
)
def test_no_escape_sequence_from_a_name_message_or_result_reaches_the_terminal(
    edges: Path, token: str, args: list[str], code: int, seen: str
) -> None:
    status, output = _in_terminal(edges, *args, token=token)
    assert status == code, output
    assert seen in output, output
    assert "\x1b]0;" not in output and "\x07" not in output and "\x1b[2J" not in output, repr(output)
