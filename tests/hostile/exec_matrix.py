"""`rig exec`'s signal matrix: SIGINT, SIGTERM or SIGHUP to rig's own pid or its process group, in a
local or a docker workspace, from rig's cache or the full way; then kill -9 of rig (docker).

Each trial starts ``rig exec ws -- sh -c SCRIPT`` in a session of its own: a shell waiting for a
foreground child that became ``sleep 300`` (on the host, both write their pid; in the container,
the test looks for ``sleep 300``). Once the child runs, the signal goes to rig's pid (``kill
PID``, a supervisor) or its group (a terminal). rig must exit 128 + the signal within 30 s, and
nothing of the command may run afterwards. A kill -9 trial SIGKILLs rig's group instead, checks
that the command outlived it (else it proves nothing), and runs ``rig gc`` (or ``rig op ws
quick``, the next writer on the workspace): the command must be gone after it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig
from tests.helpers import alive
from tests.hostile.signals import Docker

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
TARGETS = ("pid", "group")
PATHS = ("lean", "engine")
PROVIDERS = ("local", "docker")

CONFIG = """
import os

from rigcli import define_provider, workflow

if os.environ["RIG_MATRIX_PROVIDER"] == "docker":
    box = define_provider("docker", image=os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
else:
    box = define_provider("local")
app = workflow("matrix", providers={"box": box})


def prepare(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"snapshot": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["snapshot"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def quick(workspace, box):
    box.from_id(workspace.ctx["machine"]).exec("true", name="quick")


workflows = (
    app.sequence("matrix")
    .task("prepare", prepare)
    .workspace(create=create, remove=remove)
    .workspace_operation("quick", run=quick)
)
"""

HOST_SCRIPT = """\
echo $$ > {outer}.tmp && mv {outer}.tmp {outer}
sh -c 'echo $$ > {inner}.tmp && mv {inner}.tmp {inner}; exec sleep 300'
echo after
"""
CONTAINER_SCRIPT = "sh -c 'exec sleep 300'; echo after"


@dataclass
class Trial:
    provider: str
    path: str
    signal: str
    target: str
    exit_code: int | None
    seconds: float = 0.0
    leaks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.leaks and not self.errors


class MatrixProject:
    """One applied project with workspace ``ws`` on ``provider``, and its own RIG_HOME."""

    def __init__(self, root: Path, provider: str, docker: Docker | None = None) -> None:
        self.root, self.provider, self.docker = root, provider, docker
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / "rig_config.py").write_text(textwrap.dedent(CONFIG).lstrip(), encoding="utf-8")
        self.env = env_with_rig(
            {
                "RIG_HOME": str(root / "rig-home"),
                "RIG_HOST_STORAGE_DIR": str(root / "rig-home" / "providers"),
                "RIG_MATRIX_PROVIDER": provider,
                "RIG_RENDER": "0",
                "NO_COLOR": "1",
            }
        )
        self.count = 0
        for argv in (("apply",), ("fork", "ws"), ("exec", "ws", "--", "true")):  # the last fills rig's cache
            done = self.run(*argv)
            assert done.returncode == 0, (argv, done.stderr)

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RIG, *argv], cwd=self.project, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=180,
        )  # fmt: skip

    def _spawn(self, script: str, path: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [RIG, "exec", "ws", "--", "sh", "-c", script],
            cwd=self.project,
            env={**self.env, **({"RIG_CACHE": "off"} if path == "engine" else {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def _started(self, process: subprocess.Popen[str], outer: Path, inner: Path) -> list[str] | None:
        """What runs of the command once its child runs (host pids, or the container's lines); None:
        it never started within 120 s."""
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if self.docker is not None:
                if self._in_container():
                    return self._in_container()
                time.sleep(0.05)
                continue
            pids = [_pid(outer), _pid(inner)]
            if all(pid is not None for pid in pids):
                return [str(pid) for pid in pids]
            time.sleep(0.01)
        return None

    def _in_container(self) -> list[str]:
        assert self.docker is not None
        docker = self.docker
        return [line for container in docker.containers(self.project) for line in docker.long_commands(container)]

    def _running(self, started: list[str]) -> list[str]:
        """What of the command still runs (a zombie's parent gets a moment to reap it)."""
        deadline = time.monotonic() + 2
        while True:
            running = self._in_container() if self.docker is not None else [pid for pid in started if alive(int(pid))]
            if not running or time.monotonic() > deadline:
                return running
            time.sleep(0.05)

    def trial(self, path: str, signum: signal.Signals, target: str) -> Trial:
        self.count += 1
        outer, inner = self.root / f"outer-{self.count}", self.root / f"inner-{self.count}"
        script = CONTAINER_SCRIPT if self.docker is not None else HOST_SCRIPT.format(outer=outer, inner=inner)
        result = Trial(self.provider, path, signum.name, target, None)
        process = self._spawn(script, path)
        started: list[str] = []
        try:
            found = self._started(process, outer, inner)
            if found is None:
                result.errors.append(f"the command never started: {process.poll()}")
                return result
            started = found
            sent = time.monotonic()
            if target == "pid":
                process.send_signal(signum)
            else:
                os.killpg(process.pid, signum)
            try:
                _, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                result.errors.append("rig did not end within 30 s of the signal")
                stderr = ""
            result.seconds = time.monotonic() - sent
            result.exit_code = process.returncode
            if result.exit_code != 128 + signum:
                result.errors.append(f"exit {result.exit_code}: {stderr.strip()[-300:]}")
            result.leaks = self._running(started)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            if process.poll() is None:
                process.wait(timeout=30)
            self._clean_up(started)
        return result

    def kill9_trial(self, path: str, recover_with: str) -> Trial:
        """SIGKILL rig's group while its exec runs in the container; ``recover_with`` must end it."""
        assert self.docker is not None
        result = Trial(self.provider, path, "SIGKILL", recover_with, None)
        process = self._spawn(CONTAINER_SCRIPT, path)
        try:
            if self._started(process, self.root, self.root) is None:
                result.errors.append(f"the command never started: {process.poll()}")
                return result
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            if not self._in_container():
                result.errors.append("the command died with rig: nothing to recover (the trial proves nothing)")
            argv = ("gc",) if recover_with == "gc" else ("op", "ws", "quick")
            recovered = self.run(*argv)
            result.exit_code = recovered.returncode
            if recovered.returncode != 0:
                result.errors.append(f"rig {' '.join(argv)}: exit {recovered.returncode}: {recovered.stderr[-300:]}")
            result.leaks = self._in_container()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            if process.poll() is None:
                process.wait(timeout=30)
            self._clean_up([])
        return result

    def _clean_up(self, started: list[str]) -> None:
        """Leave nothing of a failed trial for the next one to find."""
        if self.docker is not None:
            if self._in_container():
                self.run("gc")
            return
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)

    def close(self) -> None:
        self.run("rm", "ws", "--yes")
        self.run("gc")


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def summarize(trials: list[Trial]) -> list[str]:
    """Per provider, path and target: trials, exit codes, the slowest exit, leaks; then the totals."""
    lines = []
    for key in sorted({(t.provider, t.path, t.target) for t in trials}):
        group = [t for t in trials if (t.provider, t.path, t.target) == key]
        codes = Counter(f"{t.signal}->{t.exit_code}" for t in group)
        lines.append(
            f"{key[0]:7} {key[1]:7} {key[2]:6} trials={len(group):3} "
            + " ".join(f"{code}x{count}" for code, count in sorted(codes.items()))
            + f" slowest={max(t.seconds for t in group):.1f}s leaks={sum(len(t.leaks) for t in group)}"
            f" errors={sum(len(t.errors) for t in group)}"
        )
    hangs = sum(any("did not end" in error for error in t.errors) for t in trials)
    lines.append(
        f"total trials={len(trials)} exit-3={sum(t.exit_code == 3 for t in trials)} "
        f"leaks={sum(len(t.leaks) for t in trials)} hangs={hangs} not-clean={sum(not t.clean for t in trials)}"
    )
    lines += [f"NOT CLEAN: {t}" for t in trials if not t.clean]
    return lines


__all__ = ["PATHS", "PROVIDERS", "SIGNALS", "TARGETS", "MatrixProject", "Trial", "summarize"]
