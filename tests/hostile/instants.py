"""Signals at random instants: SIGINT, SIGTERM or SIGHUP to rig's process group any time from its start.

Each trial starts one command of ``COMMANDS`` in a session of its own (a terminal's foreground job)
and, after a delay drawn uniformly from ``[0, that command's usual duration]``, ``killpg``s it
with a random signal. The commands cover every way rig starts: answered from its cache (lean
``plan``, ``ls``, ``logs``, ``exec``, ``graph``), Typer's way (``cache ls``, ``runs``), the
engine's (``RIG_CACHE=off``, ``apply``, ``--json``), and a program run by ``exec``.

Each outcome is one of:

- ``finished``: the command ended before the signal was sent;
- ``completed``: exit 0 although signalled — the signal came once the exit code was decided;
- ``interrupted``: exit 128 + the signal, and the only error line ``error: interrupted``;
- ``passed-through`` (``exec`` only): exit 128 + the signal and nothing on stderr: the program got
  the signal and rig exits with what it made of it, as ``rig exec`` does with any exit code;
- ``before-rig``: the interpreter's own start, before rig's first line could set a handler —
  killed by the signal without a word, or (SIGINT) Python's KeyboardInterrupt traceback whose
  frames are all the interpreter's start-up (site, importlib, the standard library) or the
  launcher's import of rig; only these are allowed to show no ``interrupted`` line;
- ``lost-before-rig``: exit 0 and only Python's "Exception ignored" report of a KeyboardInterrupt
  whose frames are all the interpreter's start-up: a SIGINT that landed in importlib's weakref
  callback before rig's first line, which Python drops (counted apart: the interrupt is lost);
- ``wrong``: anything else (an exit 3, another error, a traceback inside rig, a false message).

A trial also fails when ``exec``'s program outlives rig, or rig takes over 30 s to end. The
project's state is checked at the end (``rig state check``).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig
from tests.helpers import alive

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

CONFIG = """
from rigcli import define_provider, workflow

app = workflow("instants", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo ready > state", name="prepare")
        return {"ctx": {"snapshot": machine.snapshot_ref()}}
    finally:
        machine.delete()


def check(step):
    return {"ctx": {**step.ctx, "checked": True}}


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["snapshot"]).id}


workflows = app.sequence("instants").task("prepare", prepare).task("check", check).workspace(create=create)
"""

# (name, argv, environment): what a user runs day to day, each way rig can start.
COMMANDS: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("version", ("--version",), {}),
    ("plan", ("plan",), {}),
    ("plan (engine)", ("plan",), {"RIG_CACHE": "off"}),
    ("json plan", ("--json", "plan"), {}),
    ("apply", ("apply",), {}),
    ("ls", ("ls",), {}),
    ("ls --no-probe", ("ls", "--no-probe"), {}),
    ("logs", ("logs", "check"), {}),
    ("graph", ("graph",), {}),
    ("runs", ("runs",), {}),
    ("cache ls", ("cache", "ls"), {}),
    ("exec", ("exec", "ws", "--", "sh", "-c", "echo $$ > {mark}; exec sleep 0.3"), {}),
    ("exec (engine)", ("exec", "ws", "--", "sh", "-c", "echo $$ > {mark}; exec sleep 0.3"), {"RIG_CACHE": "off"}),
)

# A traceback line of the interpreter's start or the launcher's import of rig, before its handlers (line -1:
# a frame Python cannot place).
_START_FRAME = re.compile(
    r'File "(<frozen [^>]+>|<string>|[^"]*/lib/python3[^"]*/(?!site-packages/(?!_distutils_hack|__editable__))[^"]*'
    r'|[^"]*/site-packages/(_distutils_hack|__editable__)[^"]*|[^"]*/bin/rig|[^"]*/rigcli/(__init__|__main__|'
    r'_version|cli/__init__|cli/signalled|speed/__init__|speed/signals)\.py)", line -?\d+'
)


@dataclass
class Outcome:
    command: str
    signal: str
    delay: float
    kind: str
    exit_code: int | None
    detail: str = ""
    leaks: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.kind != "wrong" and not self.leaks


def classify(returncode: int | None, stderr: str, signum: int, *, exec_: bool = False) -> tuple[str, str]:
    """The outcome's kind (see the module's docstring) and, when it is wrong, why."""
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    if exec_ and returncode == 128 + signum and not stderr.strip():
        return "passed-through", ""
    if returncode == 0:
        if signum == signal.SIGINT and stderr.startswith("Exception ignored in") and _only_start_frames(stderr):
            return "lost-before-rig", ""
        return ("completed", "") if not errors and "Traceback" not in stderr else ("wrong", stderr[-400:])
    if returncode == 128 + signum and errors == ["error: interrupted"] and "Traceback" not in stderr:
        return "interrupted", ""
    if returncode == -signum and not stderr.strip():
        return "before-rig", ""
    if signum == signal.SIGINT and returncode in (1, -signal.SIGINT) and _only_start_frames(stderr):
        return "before-rig", ""
    return "wrong", f"exit {returncode}: {stderr.strip()[-400:]}"


def _only_start_frames(stderr: str) -> bool:
    frames = [line.strip() for line in stderr.splitlines() if line.strip().startswith("File ")]
    ends = stderr.rstrip().endswith(("KeyboardInterrupt", "KeyboardInterrupt:"))
    return ends and all(_START_FRAME.match(frame) for frame in frames)


class InstantsProject:
    """One applied project with a workspace ``ws`` (local machines), and its own RIG_HOME."""

    def __init__(self, root: Path, rig: str = RIG) -> None:
        self.root = root
        self.rig = rig
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / "rig_config.py").write_text(textwrap.dedent(CONFIG).lstrip(), encoding="utf-8")
        self.env = env_with_rig(
            {
                "RIG_HOME": str(root / "rig-home"),
                "RIG_HOST_STORAGE_DIR": str(root / "rig-home" / "providers"),
                "RIG_RENDER": "0",
                "NO_COLOR": "1",
                "RIG_NO_BROWSER": "1",
            }
        )
        self.count = 0
        for argv in (("apply",), ("fork", "ws")):
            done = self._run(argv)
            assert done.returncode == 0, done.stderr
        self.durations = {name: self._duration(argv, extra) for name, argv, extra in COMMANDS}

    def _run(self, argv: tuple[str, ...], extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.rig, *argv],
            cwd=self.project,
            env={**self.env, **(extra or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def _duration(self, argv: tuple[str, ...], extra: dict[str, str]) -> float:
        """The command's median wall time over three runs (they also warm rig's cache)."""
        times = []
        for _ in range(3):
            started = time.monotonic()
            done = self._run(tuple(word.format(mark=os.devnull) for word in argv), extra)
            assert done.returncode == 0, (argv, done.stderr)
            times.append(time.monotonic() - started)
        return statistics.median(times)

    def trial(self, rng: random.Random) -> Outcome:
        name, argv, extra = rng.choice(COMMANDS)
        signum = rng.choice(SIGNALS)
        delay = rng.uniform(0, self.durations[name])
        self.count += 1
        mark = self.root / f"mark-{self.count}"
        process = subprocess.Popen(
            [self.rig, *(word.format(mark=mark) for word in argv)],
            cwd=self.project,
            env={**self.env, **extra},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a process group of its own, as a terminal's foreground job has
        )
        outcome = Outcome(name, signum.name, delay, "finished", None)
        try:
            time.sleep(delay)
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signum)
                    outcome.kind = "signalled"
            try:
                _, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                outcome.kind, outcome.detail = "wrong", "rig did not end within 30 s of the signal"
                return outcome
            outcome.exit_code = process.returncode
            if outcome.kind == "signalled":
                outcome.kind, outcome.detail = classify(process.returncode, stderr, signum, exec_=argv[0] == "exec")
            elif process.returncode != 0:
                outcome.kind, outcome.detail = "wrong", f"unsignalled exit {process.returncode}: {stderr[-300:]}"
            outcome.leaks = _leaks(mark)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            if process.poll() is None:
                process.wait(timeout=30)
        return outcome

    def state_check(self) -> subprocess.CompletedProcess[str]:
        return self._run(("state", "check"))


def _leaks(mark: Path) -> list[str]:
    """The exec's program, if it still runs once rig has ended (it ends by itself after 0.3 s)."""
    try:
        pid = int(mark.read_text())
    except (OSError, ValueError):
        return []
    deadline = time.monotonic() + 0.2  # rig waited for it; a zombie is only waiting for its reaper
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return [f"exec's program pid {pid}"] if alive(pid) else []


def summarize(outcomes: list[Outcome]) -> list[str]:
    """Per command: trials and kinds; then the totals and every wrong one."""
    lines = []
    for name, _, _ in COMMANDS:
        group = [item for item in outcomes if item.command == name]
        if group:
            kinds = Counter(item.kind for item in group)
            lines.append(f"{name:16} trials={len(group):4} " + " ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    kinds = Counter(item.kind for item in outcomes)
    signalled = sum(
        kinds[kind] for kind in ("completed", "interrupted", "passed-through", "before-rig", "lost-before-rig", "wrong")
    )
    before = [item.delay for item in outcomes if item.kind == "before-rig"]
    lines.append(
        f"total trials={len(outcomes)} signalled={signalled} interrupted={kinds['interrupted']} "
        f"passed-through={kinds['passed-through']} "
        f"completed={kinds['completed']} before-rig={kinds['before-rig']}"
        + (f" (delays up to {max(before) * 1000:.0f} ms)" if before else "")
        + f" lost-before-rig={kinds['lost-before-rig']} wrong={kinds['wrong']} "
        f"exit-3={sum(item.exit_code == 3 for item in outcomes)} "
        f"leaks={sum(len(item.leaks) for item in outcomes)}"
    )
    lines += [f"WRONG: {item}" for item in outcomes if not item.clean]
    return lines


def main_loop(trials: int, seed: int, rig: str = RIG) -> tuple[list[Outcome], subprocess.CompletedProcess[str]]:
    """``trials`` random interrupts on one project (made under a temporary directory)."""
    import tempfile

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="rig-instants-") as workdir:
        project = InstantsProject(Path(workdir), rig)
        outcomes = []
        for index in range(trials):
            outcomes.append(project.trial(rng))
            if not outcomes[-1].clean:
                print(f"NOT CLEAN: {outcomes[-1]}", file=sys.stderr)
            if (index + 1) % 50 == 0:
                print(f"{index + 1}/{trials} trials", file=sys.stderr)
        return outcomes, project.state_check()


__all__ = ["COMMANDS", "InstantsProject", "Outcome", "classify", "main_loop", "summarize"]
