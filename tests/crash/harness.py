"""The kill -9 harness: `rig fork` and `rig rm` SIGKILLed at random instants, then one `rig rm` and
one `rig gc`, after which nothing rig made may be left beyond what the cache refers to.

On the swarm, leaks are the project's services, the task containers on either node and its
snapshot tags in the registry (task containers get a few seconds to go: nodes remove them after
their service).

A trial kills the whole process group at once: rig and every process it started die together,
as rig's children do when rig itself is killed (they die with it). Recovery runs through
`rig` itself. Leaks are looked for where they would be: machine and snapshot directories (with
their .tmp-/.del- copies) or the daemon's containers and images, the effects journal, workspace
records and runs left ``running``; and ``PRAGMA integrity_check`` must say ok.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig

PROVIDERS = ("local", "docker", "swarm")
OPS = ("fork", "rm")

CONFIG = """
import json
import os

from rigcli import define_provider, workflow

if os.environ.get("RIG_CRASH_PROVIDER") == "docker":
    box = define_provider("docker", image=os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
elif os.environ.get("RIG_CRASH_PROVIDER") == "swarm":
    box = define_provider(
        "swarm",
        host=os.environ["RIG_TEST_SWARM_MANAGER"],
        registry=os.environ["RIG_TEST_SWARM_REGISTRY"],
        nodes=json.loads(os.environ["RIG_TEST_SWARM_NODES"]),
        image=os.environ["RIG_TEST_SWARM_IMAGE"],
    )
else:
    box = define_provider("local")
app = workflow("crash", providers={"box": box})


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("mkdir -p tree && for i in $(seq 200); do echo $i > tree/f$i; done", name="files")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, workspace, box):
    machine = box.from_snapshot(workflow.ctx["base"])  # a copy, a container, or a service
    machine.exec("echo " + workspace.name + " > tree/name", name="name")
    return {"machine": machine.id, "snapshot": machine.snapshot_ref()}  # and an image, snapshot or registry tag


def remove(workspace, box):
    box.delete_snapshot(workspace.ctx["snapshot"])
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("crash").task("build", build).workspace(create=create, remove=remove)
"""


@dataclass
class Trial:
    provider: str
    op: str
    index: int
    delay: float  # seconds after start when the group was killed
    killed: bool  # False: the command had already finished
    record_after_kill: str  # the workspace record's status then ("none" when there was none)
    gc_removed: int = 0  # what the rm left for gc (it removes only what nothing refers to)
    leaks: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    integrity: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.leaks or self.stuck or self.errors) and self.integrity == "ok"


class Unavailable(Exception):
    """The docker daemon or the swarm (or its test image) is not there."""


def swarm_cluster() -> Any:
    """The test swarm (``tests/providers/swarm_cluster.py``); else Unavailable."""
    from tests.providers import swarm_cluster as cluster

    try:
        return cluster.connect()
    except cluster.Unavailable as exc:
        raise Unavailable(str(exc)) from None


def docker_api() -> Any:
    """An httpx client on DOCKER_HOST (a unix socket), with the test image present; else Unavailable."""
    import httpx

    from providers.docker.client import resolve_host

    host = resolve_host()
    if not host.startswith("unix://"):
        raise Unavailable(f"the crash harness drives unix-socket daemons, and DOCKER_HOST is {host}")
    api = httpx.Client(transport=httpx.HTTPTransport(uds=host[len("unix://") :]), base_url="http://docker")
    image = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
    try:
        api.get("/version", timeout=5).raise_for_status()
        if api.get(f"/images/{image}/json").status_code != 200:
            raise Unavailable(f"the test image {image} is missing")
    except (httpx.HTTPError, OSError) as exc:
        api.close()
        raise Unavailable(f"no Docker daemon answers at {host} ({exc})") from None
    return api


class CrashProject:
    """One project (with its own RIG_HOME) on one provider, applied once, then trial after trial."""

    def __init__(self, root: Path, provider: str, api: Any = None) -> None:
        self.root = root
        self.provider = provider
        self.api = api
        self.project = root / "project"
        self.project.mkdir(parents=True)
        (self.project / "rig_config.py").write_text(textwrap.dedent(CONFIG).lstrip())
        self.env = {
            "RIG_HOME": str(root / "rig-home"),
            "RIG_HOST_STORAGE_DIR": str(root / "rig-home" / "providers"),
            "RIG_CRASH_PROVIDER": provider,
            "RIG_RENDER": "0",
            "NO_COLOR": "1",
            "RIG_NO_BROWSER": "1",
        }
        self.check(self.rig("apply"), "apply")
        base = self.rig("--json", "plan").json["final_context"]["base"]
        self.base = str(base.get("snapshot_id") or base.get("image_id"))  # a swarm snapshot's id is its tag
        self.duration = {op: self._calibrate(op) for op in OPS}  # (whole, window) seconds

    # -- running rig ------------------------------------------------------------------------------
    def rig(self, *args: str) -> Result:
        return run_rig(*args, cwd=self.project, env=self.env)

    @staticmethod
    def check(result: Result, what: str) -> Result:
        if result.returncode != 0:
            raise AssertionError(f"{what} failed: {result}")
        return result

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [RIG, *args],
            cwd=self.project,
            env=env_with_rig(self.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: the kill takes rig and all it started
        )

    def _calibrate(self, op: str) -> tuple[float, float]:
        """(whole command, its in-progress window) of an unkilled command here, the quicker of two runs.

        The window starts when the record turns ``creating`` (fork) or ``removing`` (rm): from then
        on the command makes or removes machines, where a kill matters most.
        """
        wholes, windows = [], []
        for attempt in range(2):
            name = f"calibrate-{op}-{attempt}"
            if op == "rm":
                self.check(self.rig("fork", name), "fork")
            started = time.monotonic()
            process = self._spawn(*(["fork", name] if op == "fork" else ["rm", name, "--yes"]))
            entered = self._wait_for_window(process, name, op, limit=120)
            process.wait(timeout=120)
            ended = time.monotonic()
            wholes.append(ended - started)
            windows.append(ended - (entered if entered is not None else started))
            if op == "fork":
                self.check(self.rig("rm", name, "--yes"), "rm")
        return min(wholes), min(windows)

    def _wait_for_window(self, process: subprocess.Popen[bytes], name: str, op: str, *, limit: float) -> float | None:
        """When the record entered the in-progress state (None if the command ended or ``limit`` passed)."""
        wanted = "creating" if op == "fork" else "removing"
        deadline = time.monotonic() + limit
        while process.poll() is None and time.monotonic() < deadline:
            if self._status(name) == wanted:
                return time.monotonic()
            time.sleep(0.005)
        return None

    # -- one trial -----------------------------------------------------------------------------------
    def trial(self, op: str, index: int, rng: random.Random) -> Trial:
        name = f"t{index}-{op}"
        if op == "rm":
            self.check(self.rig("fork", name), "fork before rm")
            argv = ["rm", name, "--yes"]
        else:
            argv = ["fork", name]
        whole, window = self.duration[op]
        process = self._spawn(*argv)
        started = time.monotonic()
        if rng.random() < 0.3:  # any instant: start-up, the lock, the (cached) apply, the hook
            time.sleep(rng.uniform(0.0, whole))
        else:  # while machines are being made or removed, where a kill leaves the most behind
            self._wait_for_window(process, name, op, limit=whole * 3)
            time.sleep(rng.uniform(0.0, window))
        delay = time.monotonic() - started
        killed = process.poll() is None
        with contextlib.suppress(ProcessLookupError):  # already exited, group and all
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        result = Trial(self.provider, op, index, round(delay, 3), killed, self._status(name))
        recovered = self.rig("rm", name, "--yes", "--missing-ok")
        if recovered.returncode != 0:
            result.errors.append(f"rig rm after the kill: {recovered}")
        collected = self.rig("--json", "gc")
        if collected.returncode != 0:
            result.errors.append(f"rig gc after the kill: {collected}")
        else:
            result.gc_removed = len(collected.json["removed"])
        result.leaks = self.leaks()
        result.stuck, result.integrity = self._state()
        if not result.clean:  # reported; later trials start from a clean project again
            self.rig("rm", name, "--yes", "--force", "--missing-ok")
            self.rig("gc")
        return result

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.project / ".rig" / "state.sqlite", timeout=30)

    def _status(self, name: str) -> str:
        with self._db() as db:
            row = db.execute("SELECT status FROM workspaces WHERE name = ?", (name,)).fetchone()
        db.close()
        return "none" if row is None else str(row[0])

    def _state(self) -> tuple[list[str], str]:
        """Stuck records (workspaces, running runs, live effects not of the base) and integrity."""
        with self._db() as db:
            stuck = [
                f"workspace {name} ({status})" for name, status in db.execute("SELECT name, status FROM workspaces")
            ]
            stuck += [
                f"run {path} left running"
                for (path,) in db.execute("SELECT node_path FROM workflow_node_runs WHERE status = 'running'")
            ]
            for effect_id, kind, status, resource in db.execute(
                "SELECT id, kind, status, resource_json FROM effects WHERE status IN ('requested', 'confirmed')"
            ):
                if self.base not in {effect_id, *json.loads(resource).values()}:
                    stuck.append(f"effect {kind} {effect_id} still {status}")
            integrity = str(db.execute("PRAGMA integrity_check").fetchone()[0])
        db.close()
        return stuck, integrity

    def leaks(self) -> list[str]:
        """Everything rig made that is still there and is not the cached base snapshot."""
        if self.provider == "local":
            rig_dir = self.project / ".rig"
            found = [f"machines/{p.name}" for p in sorted((rig_dir / "machines").glob("*"))]
            found += [f"snapshots/{p.name}" for p in sorted((rig_dir / "snapshots").glob("*")) if p.name != self.base]
            return found
        if self.provider == "swarm":
            return self._swarm_leaks()
        labels = {"filters": json.dumps({"label": [f"rig.project={self.project}"]})}
        containers = self.api.get("/containers/json", params={"all": "true", **labels}).json()
        images = self.api.get("/images/json", params=labels).json()
        found = [f"container {c['Names'][0]}" for c in containers]
        found += [f"image {i['Id'][:19]} {i.get('RepoTags')}" for i in images if i["Id"] != self.base]
        return found

    def _swarm_leaks(self, wait: float = 20.0) -> list[str]:
        base = f"registry tag rig/snapshot:{self.base}"
        deadline = time.monotonic() + wait
        while True:
            found = [item for item in self.api.leftovers(self.project) if item != base]
            if not any(item.startswith("container ") for item in found) or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def close(self) -> None:
        """Remove what the trials' project still holds on the daemon (the base image) or the swarm."""
        if self.api is None:
            return
        if self.provider == "swarm":
            self.api.clean(self.project)
            return
        labels = {"filters": json.dumps({"label": [f"rig.project={self.project}"]})}
        for container in self.api.get("/containers/json", params={"all": "true", **labels}).json():
            self.api.delete(f"/containers/{container['Id']}", params={"force": "true"})
        for image in self.api.get("/images/json", params=labels).json():
            self.api.delete(f"/images/{image['Id']}", params={"force": "true"})


def summarize(trials: list[Trial]) -> list[str]:
    """One line per (provider, op): trials, kills, record states at the kill, gc's share, leaks."""
    lines = []
    for provider in PROVIDERS:
        for op in OPS:
            group = [t for t in trials if (t.provider, t.op) == (provider, op)]
            if not group:
                continue
            states = Counter(t.record_after_kill for t in group if t.killed)
            lines.append(
                f"{provider:6} {op:4} trials={len(group)} killed-mid-command={sum(t.killed for t in group)} "
                f"record-at-kill={dict(sorted(states.items()))} gc-removed-after-rm={sum(t.gc_removed for t in group)} "
                f"leaks={sum(len(t.leaks) for t in group)} stuck={sum(len(t.stuck) for t in group)} "
                f"errors={sum(len(t.errors) for t in group)} "
                f"integrity-ok={sum(t.integrity == 'ok' for t in group)}/{len(group)}"
            )
    return lines


__all__ = ["OPS", "PROVIDERS", "CrashProject", "Trial", "Unavailable", "docker_api", "summarize", "swarm_cluster"]
