"""Streams for machines: --json sends task output to stderr; --json-stream prints events as JSON lines."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, run_rig

SHOWN = {"path": "src/README", "text": "hello from rig\n"}  # the starter's show operation's answer


def rig(project: Path, *args: str, code: int = 0) -> Result:
    result = run_rig(*args, cwd=project, subprocess=True)
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr, result
    return result


@pytest.fixture
def starter(tmp_path: Path) -> Path:
    """The starter project, applied, with workspace demo."""
    for args in (["init"], ["apply"], ["fork", "demo"]):
        rig(tmp_path, *args)
    return tmp_path


def stream(result: Result) -> list[dict[str, Any]]:
    """Every line of stdout as one JSON object (each must parse on its own)."""
    lines = result.stdout.splitlines()
    assert lines, result
    objects = [json.loads(line) for line in lines]
    for item in objects:
        assert isinstance(item, dict) and isinstance(item["type"], str), item
    for item in objects[:-1]:
        assert datetime.fromisoformat(item["time"]).tzinfo is not None, item
    assert objects[-1]["type"] == "summary"
    assert [item["type"] for item in objects].count("summary") == 1
    return objects


def summary_document(objects: list[dict[str, Any]]) -> Any:
    """What --json would print, from the stream's last line."""
    last = dict(objects[-1])
    del last["type"]
    return last["result"] if set(last) == {"result"} else last


def test_json_keeps_stdout_one_document_and_task_output_goes_to_stderr(starter: Path) -> None:
    result = rig(starter, "--json", "op", "demo", "show")
    assert result.json == SHOWN
    assert result.stderr.splitlines() == ["hello from rig"]  # the command's output, and nothing about progress


def test_json_stream_of_an_operation_has_its_commands_output_and_ends_with_the_document(starter: Path) -> None:
    result = rig(starter, "--json-stream", "op", "demo", "show")
    objects = stream(result)
    types = [item["type"] for item in objects]
    assert "command.started" in types and "command.completed" in types
    outputs = [(item["stream"], item["data"]) for item in objects if item["type"] == "command.output"]
    assert ("stdout", "hello from rig\n") in outputs
    assert summary_document(objects) == SHOWN
    assert "hello from rig" in result.stderr  # stderr still carries the output, as with --json


def test_json_stream_of_plan_apply_fork_and_rm(starter: Path) -> None:
    plan = stream(rig(starter, "--json-stream", "plan"))
    assert summary_document(plan) == rig(starter, "--json", "plan").json

    rig(starter, "cache", "clear", "--yes")
    applied = stream(rig(starter, "--json-stream", "apply"))
    types = [item["type"] for item in applied]
    assert types.index("workflow.apply.started") < types.index("node.started") < types.index("node.completed")
    assert types[-2:] == ["workflow.apply.completed", "summary"]
    started = applied[types.index("workflow.apply.started")]
    assert started["apply_id"] and started["node_count"] >= 1
    [node] = [item for item in applied if item["type"] == "node.started"][:1]
    assert set(node) >= {"type", "time", "node_path", "run_id"}
    assert set(summary_document(applied)) == {"workflow", "context", "plan"}
    # The apply the stream announced is the one rig runs recorded.
    assert rig(starter, "--json", "runs").json["runs"][0]["id"] == started["apply_id"]

    forked = stream(rig(starter, "--json-stream", "fork", "other"))
    assert summary_document(forked)["name"] == "other"
    removed = stream(rig(starter, "--json-stream", "rm", "other", "--yes"))
    assert summary_document(removed)["name"] == "other"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["op", "demo", "nope"], 1, "nope"),
        (["no-such-command"], 2, "no-such-command"),
    ],
)
def test_a_failed_command_still_ends_its_stream_with_a_summary(
    starter: Path, args: list[str], code: int, says: str
) -> None:
    result = rig(starter, "--json-stream", *args, code=code)
    objects = stream(result)
    error = objects[-1]["error"]
    assert error["exit_code"] == code and says in error["message"]
    assert set(objects[-1]) == {"type", "error"}
    assert result.stderr.splitlines()[-1].startswith("error: ")
