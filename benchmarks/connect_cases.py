"""The connect cases: the system ssh into a docker workspace through `rig ssh-proxy` (a first connection and
one over the master), files into it (`rig cp`, `scp`), and HTTP through `rig forward`; against OpenSSH's sshd
on 127.0.0.1, `docker exec` and `docker cp`."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.fixtures import Project, base_env
from benchmarks.measure import Command, Invocation
from benchmarks.sshd import Sshd, free_port, sshd_unavailable, start_sshd
from benchmarks.suite import Case, Context, Row, Target
from benchmarks.team_cases import _remove_docker_leftovers
from rigcli.layout import ssh_alias

MB = 1_000_000
SETUP_S = 60.0

LOCAL_CONFIG = """
    from rigcli import define_provider, workflow

    app = workflow("bench", providers={"box": define_provider("local")})


    def prepare(box):
        return {"ctx": {"base": box.create_machine().snapshot_ref()}}


    def create(workflow, box):
        return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


    def remove(workspace, box):
        box.delete_machine(workspace.ctx["machine"])


    workflows = app.sequence("root").task("prepare", prepare).workspace(create=create, remove=remove)
"""


def _tools(*names: str) -> str | None:
    missing = [name for name in names if shutil.which(name) is None]
    return f"not on PATH: {', '.join(missing)}" if missing else None


class Reachable:
    """A forked workspace and the ssh config `rig ssh-config` printed for it."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.config = project.dir / "ssh_config"
        self.config.write_text(project.run("ssh-config", "bench"))
        self.alias = ssh_alias("bench", str(project.dir))

    def ssh(self, *args: str) -> Invocation:
        return Invocation(
            ["ssh", "-F", str(self.config), "-o", "BatchMode=yes", *args], self.project.dir, self.project.env
        )

    def untimed(self, *args: str) -> None:
        invocation = self.ssh(*args)
        subprocess.run(list(invocation.argv), env=invocation.env, capture_output=True, timeout=SETUP_S, check=False)


@contextlib.contextmanager
def _docker_workspace(ctx: Context, case: Case, name: str) -> Iterator[tuple[Reachable, str] | list[Row]]:
    """The docker fixture forked as ``bench`` with its ssh config, and its container; the case's skipped row
    when no daemon can run it. Its master (if one was started) and containers are gone afterwards."""
    from benchmarks.day_two_cases import _docker_project

    project = _docker_project(ctx, case, name)
    if isinstance(project, list):
        yield project
        return
    reachable: Reachable | None = None
    try:
        container = json.loads(project.run("--json", "fork", "bench"))["ctx"]["container"]
        reachable = Reachable(project)
        yield reachable, container
    finally:
        if reachable is not None:
            reachable.untimed("-O", "exit", reachable.alias)
        _remove_docker_leftovers(f"rig.project={project.dir}")


@contextlib.contextmanager
def _sshd(ctx: Context, name: str) -> Iterator[Sshd]:
    server = start_sshd(ctx.root / name)
    try:
        yield server
    finally:
        server.stop()


def run_ssh_first(ctx: Context, case: Case) -> list[Row]:
    reason = sshd_unavailable()
    if reason is not None:
        return case.skipped(reason)
    with _docker_workspace(ctx, case, "ssh-first") as found:
        if isinstance(found, list):
            return found
        reachable, _ = found
        with _sshd(ctx, "ssh-first-sshd") as server:
            rig = Command(
                "ssh ALIAS true (no master)", [reachable.ssh("-o", "ControlPath=none", reachable.alias, "true")]
            )
            baseline = Command(
                "ssh to sshd, true",
                [Invocation(["ssh", *server.client_options(), "127.0.0.1", "true"], ctx.root, base_env())],
            )
            return [ctx.compare(case, rig, baseline)]


def run_ssh_mux(ctx: Context, case: Case) -> list[Row]:
    reason = _tools("ssh")
    if reason is not None:
        return case.skipped(reason)
    with _docker_workspace(ctx, case, "ssh-mux") as found:
        if isinstance(found, list):
            return found
        reachable, container = found
        reachable.untimed(reachable.alias, "true")  # the master, kept by ControlPersist
        rig = Command("ssh ALIAS true (master up)", [reachable.ssh(reachable.alias, "true")])
        baseline = Command(
            "docker exec", [Invocation(["docker", "exec", container, "true"], reachable.project.dir, base_env())]
        )
        return [ctx.compare(case, rig, baseline)]


def _payload(ctx: Context, size: int) -> Path:
    path = ctx.root / f"payload-{size}.bin"
    if not path.exists():
        with path.open("wb") as handle:
            left = size
            while left:
                piece = os.urandom(min(left, 1 << 20))
                handle.write(piece)
                left -= len(piece)
    return path


def run_cp_docker(ctx: Context, case: Case) -> list[Row]:
    size = ctx.size(200 * MB, 20 * MB)
    with _docker_workspace(ctx, case, "cp-docker") as found:
        if isinstance(found, list):
            return found
        reachable, container = found
        payload = _payload(ctx, size)
        rig = Command("rig cp", [reachable.project.invocation("cp", str(payload), "bench:/tmp/rig-cp.bin")])
        baseline = Command(
            "docker cp",
            [Invocation(["docker", "cp", str(payload), f"{container}:/tmp/docker-cp.bin"], ctx.root, base_env())],
        )
        return [ctx.compare(case, rig, baseline, title=f"`rig cp` of {size / MB:g} MB into a docker workspace")]


def run_scp(ctx: Context, case: Case) -> list[Row]:
    reason = _tools("scp")
    if reason is not None:
        return case.skipped(reason)
    size = ctx.size(200 * MB, 20 * MB)
    with _docker_workspace(ctx, case, "scp") as found:
        if isinstance(found, list):
            return found
        reachable, _ = found
        payload = _payload(ctx, size)
        reachable.untimed(reachable.alias, "true")  # the master: what an editor's scp finds
        scp = Invocation(
            [
                "scp",
                "-F",
                str(reachable.config),
                "-o",
                "BatchMode=yes",
                str(payload),
                f"{reachable.alias}:/tmp/scp.bin",
            ],
            reachable.project.dir,
            reachable.project.env,
        )
        rig = Command("scp to ALIAS", [scp])
        baseline = Command("rig cp", [reachable.project.invocation("cp", str(payload), "bench:/tmp/rig-cp.bin")])
        return [ctx.compare(case, rig, baseline, title=f"`scp` of {size / MB:g} MB to ALIAS (master up)")]


def _started(
    argv: list[str], env: dict[str, str], cwd: Path, ready: Callable[[subprocess.Popen[str]], object]
) -> tuple[subprocess.Popen[str], object]:
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        return process, ready(process)
    except BaseException:
        _stop(process)
        raise


def _stop(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=SETUP_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _wait_port(port: int) -> None:
    import socket
    import time

    deadline = time.monotonic() + SETUP_S
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def run_forward(ctx: Context, case: Case) -> list[Row]:
    reason = sshd_unavailable() or _tools("curl")
    if reason is not None:
        return case.skipped(reason)
    size = ctx.size(200 * MB, 20 * MB)
    site = ctx.root / "forward-site"
    site.mkdir()
    shutil.copyfile(_payload(ctx, size), site / "payload.bin")
    project = Project.create(ctx.root, "forward", LOCAL_CONFIG)
    project.run("--json", "fork", "bench")
    port = free_port()
    processes: list[subprocess.Popen[str]] = []
    try:
        server, _ = _started(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
            base_env(),
            ctx.root,
            lambda _: _wait_port(port),
        )
        processes.append(server)
        forward, line = _started(
            [*project.invocation("forward", "bench", f"0:{port}", "--json").argv],
            project.env,
            project.dir,
            lambda process: json.loads(process.stdout.readline() if process.stdout else "{}"),
        )
        processes.append(forward)
        rig_url = f"{line['url']}/payload.bin"  # type: ignore[index]
        with _sshd(ctx, "forward-sshd") as sshd:
            tunnel_port = free_port()
            tunnel, _ = _started(
                ["ssh", *sshd.client_options(), "-N", "-L", f"{tunnel_port}:127.0.0.1:{port}", "127.0.0.1"],
                base_env(),
                ctx.root,
                lambda _: _wait_port(tunnel_port),
            )
            processes.append(tunnel)
            curl = ["curl", "-s", "-f", "-o", "/dev/null"]
            rig = Command("curl through rig forward", [Invocation([*curl, rig_url], ctx.root, base_env())])
            baseline = Command(
                "curl through ssh -L (sshd)",
                [Invocation([*curl, f"http://127.0.0.1:{tunnel_port}/payload.bin"], ctx.root, base_env())],
            )
            title = f"{size / MB:g} MB over HTTP through `rig forward` (local workspace)"
            return [ctx.compare(case, rig, baseline, title=title)]
    finally:
        for process in reversed(processes):
            _stop(process)


CONNECT_CASES = [
    Case(
        "ssh-first",
        "`ssh ALIAS true` into a docker workspace, no master running (`rig ssh-proxy` starts)",
        "`ssh` to OpenSSH's sshd on 127.0.0.1 running `true` (key auth)",
        Target(max_ratio=3),
        run_ssh_first,
    ),
    Case(
        "ssh-mux",
        "`ssh ALIAS true` into a docker workspace over the ControlMaster",
        "`docker exec CID true`",
        Target(max_ratio=1.5),
        run_ssh_mux,
    ),
    Case(
        "cp-docker",
        "`rig cp` of 200 MB into a docker workspace",
        "`docker cp` of the same file",
        Target(max_ratio=1.5),
        run_cp_docker,
    ),
    Case("scp", "`scp` of 200 MB to ALIAS (master up)", "`rig cp` of the same file", Target(max_ratio=2), run_scp),
    Case(
        "forward",
        "200 MB over HTTP through `rig forward` (local workspace)",
        "the same through `ssh -L` of OpenSSH's sshd",
        Target(max_ratio=2),
        run_forward,
    ),
]

__all__ = ["CONNECT_CASES"]
