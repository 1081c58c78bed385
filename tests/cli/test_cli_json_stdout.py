"""--json: stdout is exactly one JSON document, whatever project code writes to file descriptor 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_support import run_rig, write_project

# Each handler writes to fd 1 its own way, past rig's print() capture.
CONFIG = """
import os
import subprocess
import sys

from rigcli import workflow

app = workflow("noisy")


def child_process(step):
    subprocess.run(["echo", "from a child process"], check=True)
    return {"ctx": {"child": True}}


def raw_write(step):
    os.write(1, b"from os.write\\n")
    return {"ctx": {**step.ctx, "raw": True}}


def plain_print(step):
    print("from print")
    sys.stdout.flush()
    return {"ctx": {**step.ctx, "print": True}}


def create(workflow, workspace):
    subprocess.run(["echo", "from the create hook"], check=True)
    return {"name": workspace.name}


def status(workflow):
    os.write(1, b"from an operation\\n")
    print("printed by an operation")
    return {"ok": True}


workflows = (
    app.sequence("noisy")
    .task("child", child_process, cache_ttl=0)
    .task("raw", raw_write, cache_ttl=0)
    .task("print", plain_print, cache_ttl=0)
    .workspace(create=create)
    .operation("status", run=status)
)
"""

NOISE = {
    "apply": ["from a child process", "from os.write", "from print"],
    "fork": ["from a child process", "from os.write", "from print", "from the create hook"],
    "op": ["from an operation", "printed by an operation"],
}


@pytest.mark.parametrize("intercept", ["on", "off"])
@pytest.mark.parametrize(
    ("args", "noise"),
    [(["apply"], "apply"), (["fork", "demo"], "fork"), (["op", "status"], "op")],
)
def test_stdout_is_one_document_and_the_rest_goes_to_stderr(
    tmp_path: Path, intercept: str, args: list[str], noise: str
) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_RENDER": "0", "RIG_NO_CONSOLE_INTERCEPT": "1" if intercept == "off" else "0"}
    result = run_rig("--json", *args, cwd=project, env=env, subprocess=True)
    assert result.returncode == 0, result
    document = json.loads(result.stdout)  # fails on anything before or after the one document
    assert isinstance(document, dict)
    for text in NOISE[noise]:
        if text.startswith(("from print", "printed by")) and intercept == "on":
            continue  # captured as the node's log output; --json shows no log
        assert text in result.stderr, result
