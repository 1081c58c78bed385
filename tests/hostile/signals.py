"""Process-group interrupts: a terminal's Ctrl-C, SIGTERM or hang-up reaches rig *and* the handler's child.

Each trial starts `rig apply` in a session of its own (so its process group is the one a terminal
would signal), waits until the handler's long command runs — it writes its own pid, and on the
host ``/proc/<pid>/comm`` must say ``sleep`` —, then ``os.killpg``s the group, exactly like the
terminal. Whatever the handler makes of its child's death, rig must exit 128 + the signal, the run
must be recorded ``interrupted`` (never ``succeeded``, so never a cache entry), and the command
must not survive, on the host or in the container.

Handler kinds: ``subprocess.Popen(...).wait()``, ``subprocess.run(..., check=True)``,
``os.system``, ``local.run`` and a docker ``machine.exec``. ``kill9_exec_trial`` SIGKILLs the group
instead while a docker exec runs, and checks that the next rig command ends the session.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig

HOST_KINDS = ("popen", "run-check", "os-system", "local-run")
DOCKER_KIND = "docker-exec"
KINDS = (*HOST_KINDS, DOCKER_KIND)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
IN_CONTAINER_MARK = "/tmp/rig-hostile-mark"

CONFIG = """
import os
import subprocess

from rigcli import define_provider, workflow

KIND = os.environ["RIG_HOSTILE_KIND"]
MARK_IN_CONTAINER = "/tmp/rig-hostile-mark"
LONG = "echo $$ > " + os.environ["RIG_HOSTILE_MARK"] + "; exec sleep 300"

if KIND.startswith("docker"):
    box = define_provider("docker", image=os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
else:
    box = define_provider("local")
app = workflow("hostile", providers={"box": box})


def long_running(step, box, local):
    if KIND == "popen":
        subprocess.Popen(["sh", "-c", LONG]).wait()
    elif KIND == "run-check":
        subprocess.run(["sh", "-c", LONG], check=True)
    elif KIND == "os-system":
        os.system(LONG)
    elif KIND == "local-run":
        local.run(["sh", "-c", LONG])
    elif KIND == "docker-exec":
        box.create_machine().exec("echo $$ > " + MARK_IN_CONTAINER + "; exec sleep 300", name="long command")
    return {"ctx": {"finished": KIND}}


workflows = app.sequence("hostile").task("long", long_running, cache_ttl=0)
"""


@dataclass
class Trial:
    kind: str
    signal: str
    exit_code: int | None  # None: rig had to be SIGKILLed
    status: str  # the run's status in the journal afterwards
    survivors: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def graceful(self) -> bool:
        """A signal rig may handle (not SIGKILL, after which the next command recovers)."""
        return self.signal != "SIGKILL"

    @property
    def expected_exit(self) -> int:
        return 128 + int(signal.Signals[self.signal])

    @property
    def clean(self) -> bool:
        if not self.graceful:
            return not self.survivors and not self.errors
        return (
            self.exit_code == self.expected_exit
            and self.status == "interrupted"
            and not self.survivors
            and not self.errors
        )


class Unavailable(Exception):
    """No docker daemon (or test image) to run the docker kind against."""


class Docker:
    """The test's own view of the daemon at DOCKER_HOST (a unix socket), to look inside containers."""

    def __init__(self, api: Any = None) -> None:
        """On ``api`` (an httpx client on a daemon, left open), else on a client of its own at DOCKER_HOST."""
        from tests.crash.harness import Unavailable as CrashUnavailable
        from tests.crash.harness import docker_api

        self._owned = api is None
        try:
            self.api = docker_api() if api is None else api
        except CrashUnavailable as exc:
            raise Unavailable(str(exc)) from None

    def containers(self, project: Path) -> list[str]:
        labels = {"filters": json.dumps({"label": [f"rig.project={project}", "rig.kind=machine"]})}
        return [item["Id"] for item in self.api.get("/containers/json", params=labels).json()]

    def run(self, container: str, command: str) -> str:
        """``sh -c command`` in the container; its stdout (empty if the container is gone)."""
        from providers.docker.execution import FrameDecoder

        created = self.api.post(
            f"/containers/{container}/exec",
            json={"AttachStdout": True, "AttachStderr": False, "Cmd": ["sh", "-c", command]},
        )
        if created.status_code != 201:
            return ""
        started = self.api.post(
            f"/exec/{created.json()['Id']}/start",
            json={"Detach": False, "Tty": False},
            headers={"Connection": "close"},  # a hijacked connection must not go back to the pool
        )
        return b"".join(data for stream, data in FrameDecoder().feed(started.content) if stream == "stdout").decode()

    def long_commands(self, container: str) -> list[str]:
        """Processes in the container running the trial's ``sleep 300`` (the keep-alive sleeps longer)."""
        listing = self.run(
            container, "for p in /proc/[0-9]*; do printf '%s ' ${p#/proc/}; tr '\\0' ' ' < $p/cmdline; echo; done"
        )
        return [line.strip() for line in listing.splitlines() if line.strip().endswith("sleep 300")]

    def close(self) -> None:
        if self._owned:
            self.api.close()


class SignalProject:
    """One project (with its own RIG_HOME) that the trials apply again and again."""

    def __init__(self, root: Path, docker: Docker | None = None) -> None:
        self.root = root
        self.docker = docker
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / "rig_config.py").write_text(textwrap.dedent(CONFIG).lstrip())
        self.env = {
            "RIG_HOME": str(root / "rig-home"),
            "RIG_HOST_STORAGE_DIR": str(root / "rig-home" / "providers"),
            "RIG_RENDER": "0",
            "NO_COLOR": "1",
            "RIG_NO_BROWSER": "1",
            "RIG_TRUST_HOST_COMMANDS": "1",
        }
        self.count = 0

    def rig(self, kind: str, *args: str) -> Result:
        env = {**self.env, "RIG_HOSTILE_KIND": kind, "RIG_HOSTILE_MARK": "/dev/null"}
        return run_rig(*args, cwd=self.project, env=env, subprocess=True)

    def _spawn(self, kind: str, mark: Path) -> subprocess.Popen[str]:
        env = env_with_rig({**self.env, "RIG_HOSTILE_KIND": kind, "RIG_HOSTILE_MARK": str(mark)})
        return subprocess.Popen(
            [RIG, "apply"],
            cwd=self.project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a process group of its own, as a terminal's foreground job has
        )

    def trial(self, kind: str, signum: signal.Signals) -> Trial:
        self.count += 1
        mark = self.root / f"mark-{self.count}"
        process = self._spawn(kind, mark)
        result = Trial(kind, signum.name, None, "none")
        try:
            target = self._wait_until_running(kind, mark, process)
            if target is None:
                result.errors.append("the long command never started")
            os.killpg(process.pid, signum)
            try:
                _, stderr = process.communicate(timeout=60)
                result.exit_code = process.returncode
            except subprocess.TimeoutExpired:
                result.errors.append("rig did not exit within 60 s of the signal")
                stderr = ""
            if result.exit_code != result.expected_exit:
                result.errors.append(f"exit {result.exit_code}: {stderr.strip()[-300:]}")
            result.status = self._newest_status()
            if target is not None:
                result.survivors = self._survivors(kind, target)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            if kind == DOCKER_KIND:
                self._collect(result)
        return result

    def kill9_exec_trial(self, *, recover_with: str) -> Trial:
        """SIGKILL rig and its group while a docker exec runs; then ``recover_with`` (``apply``: the
        next command on the project, or ``gc``) must end the exec's processes in the container."""
        assert self.docker is not None
        self.count += 1
        mark = self.root / f"mark-{self.count}"
        process = self._spawn(DOCKER_KIND, mark)
        result = Trial(DOCKER_KIND, "SIGKILL", None, "none")
        try:
            target = self._wait_until_running(DOCKER_KIND, mark, process)
            if target is None:
                result.errors.append("the long command never started")
                return result
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            container = target.split(":", 1)[0]
            if not self.docker.long_commands(container):
                result.errors.append("the exec died with rig: nothing left to recover (the test proves nothing)")
            command = ("apply",) if recover_with == "apply" else ("--json", "gc")
            recovered = self.rig("docker-quick", *command)
            if recovered.returncode != 0:
                result.errors.append(f"rig {' '.join(command)} after the kill: {recovered}")
            result.exit_code = recovered.returncode
            result.status = self._newest_status()
            result.survivors = [f"{container[:12]}: {line}" for line in self.docker.long_commands(container)]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            self._collect(result)
        return result

    def _wait_until_running(self, kind: str, mark: Path, process: subprocess.Popen[str]) -> str | None:
        """The long command's pid on the host, or ``container:pid``; None if rig ended first."""
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if kind.startswith("docker"):
                assert self.docker is not None
                for container in self.docker.containers(self.project):
                    pid = self.docker.run(container, f"cat {IN_CONTAINER_MARK} 2>/dev/null").strip()
                    if pid and self.docker.run(container, f"cat /proc/{pid}/comm 2>/dev/null").strip() == "sleep":
                        return f"{container}:{pid}"
                time.sleep(0.05)
                continue
            with contextlib.suppress(OSError, ValueError):
                pid = int(mark.read_text())
                with open(f"/proc/{pid}/comm") as comm:
                    if comm.read().strip() == "sleep":
                        return str(pid)
            time.sleep(0.01)
        return None

    def _survivors(self, kind: str, target: str) -> list[str]:
        if kind.startswith("docker"):
            assert self.docker is not None
            container = target.split(":", 1)[0]
            return [f"{container[:12]}: {line}" for line in self.docker.long_commands(container)]
        pid = int(target)
        deadline = time.monotonic() + 5  # already dead when rig exits; a zombie waits for its reaper
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        return [f"host pid {pid} (sleep 300)"] if _alive(pid) else []

    def _newest_status(self) -> str:
        database = self.project / ".rig" / "state.sqlite"
        if not database.exists():
            return "none"
        with contextlib.closing(sqlite3.connect(database, timeout=30)) as db:
            row = db.execute("SELECT status FROM workflow_node_runs ORDER BY created_at DESC, id DESC").fetchone()
        return "none" if row is None else str(row[0])

    def _collect(self, result: Trial) -> None:
        """Remove the trial's container (its run is no cache entry) so the next trial starts clean."""
        collected = self.rig("docker-quick", "gc")
        if collected.returncode != 0:
            result.errors.append(f"rig gc after the trial: {collected}")
        if self.docker is not None and self.docker.containers(self.project):
            result.errors.append("rig gc left the trial's container")

    def close(self) -> None:
        """Leave nothing on the daemon."""
        if self.docker is None:
            return
        for container in self.docker.containers(self.project):
            self.docker.api.delete(f"/containers/{container}", params={"force": "true"})


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def summarize(trials: list[Trial]) -> list[str]:
    """Per kind and signal: trials, exit codes, statuses and survivors; then the totals."""
    lines = []
    for kind in KINDS:
        for name in sorted({t.signal for t in trials if t.kind == kind}):
            group = [t for t in trials if (t.kind, t.signal) == (kind, name)]
            codes = sorted({str(t.exit_code) for t in group})
            statuses = sorted({t.status for t in group})
            # After kill -9 the exit and status are those of the command that recovered.
            what = ("exits", "statuses") if group[0].graceful else ("recovery-exits", "newest-run")
            lines.append(
                f"{kind:12} {name:7} trials={len(group)} {what[0]}={','.join(codes)} "
                f"{what[1]}={','.join(statuses)} survivors={sum(len(t.survivors) for t in group)} "
                f"errors={sum(len(t.errors) for t in group)}"
            )
    exit0 = sum(t.exit_code == 0 and t.graceful for t in trials)
    succeeded = sum(t.status == "succeeded" and t.graceful for t in trials)
    lines.append(
        f"total trials={len(trials)} exit-0={exit0} recorded-succeeded={succeeded} "
        f"survivors={sum(len(t.survivors) for t in trials)} not-clean={sum(not t.clean for t in trials)}"
    )
    return lines


__all__ = [
    "DOCKER_KIND",
    "HOST_KINDS",
    "KINDS",
    "SIGNALS",
    "Docker",
    "SignalProject",
    "Trial",
    "Unavailable",
    "summarize",
]
