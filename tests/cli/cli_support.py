"""Run `rig` (in this process, or the installed console script as a subprocess) and write projects to run it on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli.inprocess import run_in_process

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPLETIONS = REPO_ROOT / "completions"


def rig_executable() -> str:
    """The console script pip installed next to this interpreter (not a shim that re-dispatches)."""
    beside = Path(sys.executable).parent / "rig"
    if beside.is_file():
        return str(beside)
    found = shutil.which("rig")
    if found is None:
        raise RuntimeError("rig is not installed: run `python3 -m pip install -e '.[test]'` first")
    return found


RIG = rig_executable()
RIG_BIN_DIR = str(Path(RIG).parent)


def env_with_rig(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = RIG_BIN_DIR + os.pathsep + env.get("PATH", "")
    env.update(extra or {})
    return env


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error: ")]

    def __str__(self) -> str:
        return f"rig {' '.join(self.args)} -> {self.returncode}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def run_rig(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    subprocess: bool = False,
) -> Result:
    """``rig ARGS`` in ``cwd`` with ``env`` laid over the environment and ``input`` on stdin.

    In this process by default, through the function the console script calls (see inprocess.py);
    ``subprocess=True`` runs the installed console script instead, for what only a real process
    shows: the entry point itself, signals, terminals, exit paths, contention between processes.
    ``timeout`` bounds a subprocess; an in-process run is bounded by the test's own timeout.
    """
    if subprocess:
        return run_rig_process(*args, cwd=cwd, env=env, input=input, timeout=timeout)
    captured = run_in_process(args, cwd=cwd, environ=env_with_rig(env), input=input or "")
    return Result(list(args), captured.returncode, captured.stdout, captured.stderr)


def run_rig_masked(project: Path, args: tuple[str, ...], *, env: dict[str, str], secret: str, code: int = 0) -> Result:
    """``rig ARGS`` as a subprocess in ``project``: it exits ``code``, without a traceback, and ``secret``
    (the value of a ``secret()`` the project uses) appears nowhere in what it printed."""
    result = run_rig(*args, cwd=project, env=env, subprocess=True)
    assert result.returncode == code, result
    assert secret not in result.stdout + result.stderr, result
    assert "Traceback" not in result.stderr, result
    return result


def run_rig_process(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> Result:
    """The installed console script as a subprocess."""
    completed = subprocess.run(
        [RIG, *args],
        cwd=cwd,
        env=env_with_rig(env),
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(list(args), completed.returncode, completed.stdout, completed.stderr)


def kill_apply_after(project: Path, marker: str, timeout: float = 60, command: Sequence[str] = ("apply",)) -> None:
    """Start `rig apply` (or ``command``) in ``project`` and SIGKILL it (and its group) once its
    stderr shows ``marker``."""
    process = subprocess.Popen(
        [RIG, *command],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0"}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + timeout
        for line in process.stderr:
            if marker in line or time.monotonic() > deadline:
                break
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)


def write_project(directory: Path, config: str, **files: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "rig_config.py").write_text(textwrap.dedent(config).lstrip(), encoding="utf-8")
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return directory


# A pure-Python project (no provider) that exercises every CLI surface quickly.
DEV_CONFIG = """
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from rigcli import Arg, WorkspaceRef, workflow

app = workflow("dev")


def base(step):
    print("preparing base")
    return {"ctx": {"base": 1}}


def tools(step):
    return {"ctx": {**step.ctx, "tools": ["git"]}}


def create(workflow, workspace):
    return {"name": workspace.name, "base": workflow.ctx["base"]}


def remove(workspace):
    print(f"removing {workspace.name}")


class TestInput(BaseModel):
    bail: bool = False
    retries: int = 0
    scope: str = Field("test:all", description="which tests to run")

    @field_validator("scope")
    @classmethod
    def _scope(cls, value):
        if not value.startswith("test:"):
            raise ValueError("scope must start with test:")
        return value


def run_tests(workspace, input):
    return {"workspace": workspace.name, "bail": input.bail, "retries": input.retries, "scope": input.scope}


class GreetInput(BaseModel):
    who: str = Arg(position=0, description="who to greet")
    tone: Literal["warm", "dry"] = "warm"


def greet(workspace, input):
    return f"hello {input.who} ({input.tone}) from {workspace.name}"


class PairInput(BaseModel):
    other: WorkspaceRef = Field(description="the other workspace")


def pair(workspace, input):
    return {"pair": [workspace.name, input.other.name]}


def nothing(workspace):
    return None


def status(workflow):
    return {"ctx": workflow.ctx}


workflows = (
    app.sequence("dev")
    .task("base", base)
    .task("tools", tools)
    .workspace(create=create, remove=remove)
    .workspace_operation("test", run=run_tests, input=TestInput, description="run the tests")
    .workspace_operation("greet", run=greet, input=GreetInput)
    .workspace_operation("pair", run=pair, input=PairInput)
    .workspace_operation("noop", run=nothing)
    .operation("status", run=status, description="show the prepared context")
)
"""

MULTI_CONFIG = """
from rigcli import sequence

api = sequence("api").task("a", lambda step: {"ctx": {"a": 1}})
web = sequence("web").task("w", lambda step: {"ctx": {"w": 1}})
workflows = [api, web]
"""

SLOW_CONFIG = """
import time

from rigcli import workflow

app = workflow("slow")


def wait(step):
    print("waiting", flush=True)
    time.sleep({seconds})
    return {{"ctx": {{"waited": True}}}}


workflows = app.sequence("slow").task("wait", wait, cache_ttl=0)
"""


HOST_COMMAND_CONFIG = """
from rigcli import sequence


def hello(local):
    return {"exit_code": local.run(["sh", "-c", "echo ran-on-host"])}


def setup(step, local):
    return {"ctx": {"exit_code": local.run(["sh", "-c", "echo set-up-on-host"])}}


workflows = sequence("host").task("setup", setup).operation("hello", run=hello)
"""

# A provider plugin passed inline that presents an interaction and emits a provider event.
EVENTS_CONFIG = """
import threading

from rigcli import define_provider, workflow


class Runtime:
    def __init__(self, context):
        self.context = context

    def login(self):
        done = threading.Event()
        threading.Timer(0.2, done.set).start()
        self.context.interaction.present_blocking({
            "id": "login", "title": "Example login", "url": "https://example.invalid/login",
            "instructions": "approve the request", "completed": lambda: done.wait(10), "stop": lambda: None,
        })
        self.context.emit({"type": "vm.created", "provider_id": "fake", "vm_id": "vm-1"})


class Controller:
    provider_id = "fake"

    def runtime(self, context):
        return Runtime(context)


class Plugin:
    provider_id = "fake"

    def create_provider(self, setup):
        return Controller()


app = workflow("events", providers={"fake": define_provider("fake", plugin=Plugin())})


def sign_in(step, fake, log):
    log.debug("hidden detail")
    log.warning("careful now")
    fake.login()
    return {"ctx": {"signed_in": True}}


def boom(step):
    print("about to fail")
    raise RuntimeError("the disk is full")


workflows = app.sequence("events").task("sign-in", sign_in).task("boom", boom)
"""
