"""A docker workspace after fork, through the installed ``rig``: live status as the daemon changes it,
stop and start, operations on a stopped workspace, exec and a real terminal over unix, TLS, ssh and
Podman's Docker-compatible service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from docker_endpoints import EndpointDaemon, Unavailable, connect, required_variable
from e2e_support import RIG, Rig, copy_example, rig_env

from tests.helpers import imported_by_rig, quit_a_program_at_the_shell_and_exit_7

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")


def daemon_for(endpoint: str) -> Iterator[EndpointDaemon]:
    try:
        daemon = connect(endpoint, IMAGE)
    except Unavailable as exc:
        if os.environ.get(required_variable(endpoint)) == "1":
            pytest.fail(f"{required_variable(endpoint)}=1 but {exc}")
        pytest.skip(str(exc))
    yield daemon
    daemon.api.close()


@pytest.fixture(params=["unix", "tls", "ssh", "podman"])
def any_daemon(request: pytest.FixtureRequest) -> Iterator[EndpointDaemon]:
    yield from daemon_for(request.param)


@pytest.fixture
def unix_daemon() -> Iterator[EndpointDaemon]:
    yield from daemon_for("unix")


@pytest.fixture(params=["unix", "podman"])  # each engine on its own socket: Docker Engine and Podman
def engine_daemon(request: pytest.FixtureRequest) -> Iterator[EndpointDaemon]:
    yield from daemon_for(request.param)


def forked_on(daemon: EndpointDaemon, tmp_path: Path) -> Iterator[Rig]:
    """The docker example applied and forked as ``dev`` on ``daemon``; its containers and images removed after."""
    env = rig_env(tmp_path, RIG_DOCKER_IMAGE=daemon.image)
    for key, value in daemon.env.items():
        env.pop(key, None)
        if value is not None:
            env[key] = value
    project = copy_example("docker", tmp_path)
    rig = Rig(project, env)
    try:
        rig.json("apply")
        rig.json("fork", "dev")
        yield rig
    finally:
        labels = json.dumps({"label": [f"rig.project={project}"]})
        for container in daemon.api.get("/containers/json", params={"all": "true", "filters": labels}).json():
            daemon.api.delete(f"/containers/{container['Id']}", params={"force": "true"})
        for image in daemon.api.get("/images/json", params={"filters": labels}).json():
            daemon.api.delete(f"/images/{image['Id']}", params={"force": "true"})


@pytest.fixture
def on_unix(unix_daemon: EndpointDaemon, tmp_path: Path) -> Iterator[Rig]:
    yield from forked_on(unix_daemon, tmp_path)


@pytest.fixture
def on_engine(engine_daemon: EndpointDaemon, tmp_path: Path) -> Iterator[Rig]:
    yield from forked_on(engine_daemon, tmp_path)


@pytest.fixture
def on_any(any_daemon: EndpointDaemon, tmp_path: Path) -> Iterator[Rig]:
    yield from forked_on(any_daemon, tmp_path)


def live(rig: Rig) -> dict[str, str]:
    (workspace,) = rig.json("ls")["workflows"][0]["workspaces"]
    assert isinstance(workspace["live"], dict)
    return workspace["live"]


def container(rig: Rig) -> str:
    (workspace,) = rig.json("ls", "--no-probe")["workflows"][0]["workspaces"]
    return str(workspace["ctx"]["container"])


def test_ls_follows_the_daemon_running_stopped_missing_and_rm_needs_no_force(
    on_engine: Rig, engine_daemon: EndpointDaemon
) -> None:
    api, cid = engine_daemon.api, container(on_engine)
    running = live(on_engine)
    assert running["state"] == "running" and running["detail"].startswith("Up "), running

    assert api.post(f"/containers/{cid}/stop", params={"t": "0"}).status_code == 204
    stopped = live(on_engine)
    assert stopped["state"] == "stopped" and stopped["detail"].startswith("Exited (")
    assert "stopped (Exited (" in on_engine.run("ls").stdout

    assert api.post(f"/containers/{cid}/start").status_code == 204
    assert api.post(f"/containers/{cid}/pause").status_code == 204
    assert live(on_engine) == {"state": "stopped", "detail": "paused"}

    assert api.delete(f"/containers/{cid}", params={"force": "true"}).status_code == 204
    assert live(on_engine) == {"state": "missing", "detail": f"container {cid[:12]} is gone"}
    done = on_engine.run("op", "dev", "status", check=False)
    assert done.returncode == 1
    assert (
        done.stderr.splitlines()[-1]
        == f"error: Workspace dev is missing: container {cid[:12]} is gone; rig rm dev forgets it"
    )
    assert on_engine.run("rm", "dev", "--yes", check=False).returncode == 0
    assert on_engine.json("ls")["workflows"][0]["workspaces"] == []


def test_stop_and_start_are_journaled_and_shown_and_a_stopped_workspace_is_refused(
    on_unix: Rig, unix_daemon: EndpointDaemon
) -> None:
    api, cid = unix_daemon.api, container(on_unix)
    done = on_unix.run("stop", "dev", check=False)
    assert (done.returncode, done.stderr) == (0, "stopped dev\n")
    assert api.get(f"/containers/{cid}/json").json()["State"]["Running"] is False
    assert live(on_unix)["state"] == "stopped"
    (effect,) = [row for row in on_unix.json("ls")["workflows"][0]["workspaces"][0]["resources"]]
    assert effect["resource"]["power"] == "stopped"  # journaled on the machine's effect

    for argv in (["op", "dev", "status"], ["exec", "dev", "--", "true"]):
        refused = on_unix.run(*argv, check=False)
        assert refused.returncode == 1, refused
        (line,) = refused.stderr.splitlines()
        assert line.startswith("error: Workspace dev is stopped (Exited (") and line.endswith(
            "; run rig start dev, or pass --start"
        )

    started = on_unix.run("exec", "--start", "dev", "--", "echo", "in", check=False)
    assert (started.returncode, started.stdout) == (0, "in\n")
    assert api.get(f"/containers/{cid}/json").json()["State"]["Running"] is True

    assert on_unix.run("stop", "--all").stderr == "stopped dev\n"
    status = on_unix.json("op", "dev", "status", "--start")
    assert status["output"].endswith("tests passed\n")
    assert live(on_unix)["state"] == "running"

    on_unix.run("stop", "dev")
    assert on_unix.run("start", "dev").stderr == "started dev\n"
    assert live(on_unix)["state"] == "running"
    again = on_unix.run("start", "dev")  # already running: nothing to do, still fine
    assert again.returncode == 0
    resources = on_unix.json("ls")["workflows"][0]["workspaces"][0]["resources"]
    assert resources[0]["resource"]["power"] == "started"


def test_exec_exit_codes_signals_and_streams(on_any: Rig) -> None:
    ok = on_any.run("exec", "dev", "--", "sh", "-c", "echo out; echo err >&2", check=False)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "out\n", "err\n")
    assert on_any.run("exec", "dev", "--", "sh", "-c", "exit 3", check=False).returncode == 3
    assert on_any.run("exec", "dev", "--", "sh", "-c", "kill -INT $$", check=False).returncode == 130
    data = "".join(f"line {number}\n" for number in range(20000))
    piped = subprocess.run(
        [RIG, "exec", "dev", "--", "wc", "-l"],
        cwd=on_any.project,
        env=on_any.env,
        input=data,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (piped.returncode, piped.stdout.strip()) == (0, "20000")


def test_exec_imports_neither_httpx_nor_the_planner_and_ls_no_httpx(on_unix: Rig) -> None:
    # rig exec finds the workspace, probes it and attaches on the provider's own connection: no plan,
    # no httpx, no event loop.
    def importtime(*args: str) -> str:
        done = subprocess.run(
            [RIG, *args],
            cwd=on_unix.project,
            env={**on_unix.env, "PYTHONPROFILEIMPORTTIME": "1"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stderr

    def imported(*args: str) -> set[str]:
        found = importtime(*args).splitlines()
        return {line.split("|")[-1].strip() for line in found if line.startswith("import time:")}

    loaded = imported("exec", "dev", "--", "true")
    assert "providers.docker.rawhttp" in loaded  # it did speak to the daemon
    for heavy in ("httpx", "httpcore", "rigcli.engine.planner", "rigcli.engine.evaluate", "asyncio"):
        assert heavy not in loaded
    # Once the config is remembered, not even re (with enum), json or shlex: ~30M instructions of a
    # command whose own work is three requests.
    imported("exec", "dev", "--", "true")
    loaded = imported_by_rig(importtime("exec", "dev", "--", "true"))
    assert "rigcli.cache.answers" in loaded and "rigcli.cache.planning" not in loaded  # remembered
    assert "rigcli.engine.project" not in loaded
    assert not loaded & {"re", "enum", "json", "shlex"}, loaded & {"re", "enum", "json", "shlex"}
    # rig ls plans (outdated: the daemon's check, the snapshot's validation) and probes, all on the
    # provider's own connection too.
    listed = imported("ls")
    assert "rigcli.engine.planner" in listed and "providers.docker.rawhttp" in listed
    for heavy in ("httpx", "httpcore", "asyncio"):
        assert heavy not in listed


def test_exec_in_a_terminal_sees_its_size_and_ctrl_c_and_exits_with_its_code(on_any: Rig) -> None:
    env = {**on_any.env, "TERM": "xterm"}
    child = pexpect.spawn(
        RIG, ["exec", "dev", "--", "sh"], cwd=str(on_any.project), env=env, dimensions=(31, 97), timeout=60
    )
    try:
        child.sendline("export PS1='in-ctr$ '")
        child.expect_exact("in-ctr$ ")
        child.sendline("stty size; tty")
        child.expect_exact("31 97\r\n/dev/pts/")
        child.setwinsize(44, 132)  # SIGWINCH: rig tells the daemon the new size
        child.sendline("sleep 0.5; stty size")
        child.expect_exact("44 132\r\n")
        child.sendline("trap 'echo got-int' INT; echo armed; sleep 30")
        child.expect_exact("\r\narmed\r\n")  # the trap is set and sleep is starting (not the typed line)
        child.sendintr()
        child.expect_exact("got-int")
        child.sendline("exit 7")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 7


# Ctrl-\ typed on rig's terminal: rig is in raw mode, so the byte reaches the exec's terminal in the
# container, whose program gets SIGQUIT; rig exits with the program's code (see test_day_two_local).
# busybox sh ignores SIGQUIT (as bash does) and so do the commands it runs, unless it traps it: the
# program that dies of Ctrl-\ is one the shell execs (`docker exec -it` behaves the same), seen to
# run (it echoes a line back) before Ctrl-\ is typed.
QUIT_DIES = "ulimit -c 0; exec cat"
QUIT_TRAPPED = "ulimit -c 0; trap 'echo got-quit; exit 9' QUIT; echo armed; sleep 30; exit 1"


def test_ctrl_backslash_reaches_the_program_in_exec_and_in_the_shell_not_rig(on_any: Rig) -> None:
    env = {**on_any.env, "TERM": "xterm"}
    for script, code in ((QUIT_DIES, 128 + signal.SIGQUIT), (QUIT_TRAPPED, 9)):
        child = pexpect.spawn(RIG, ["exec", "dev", "--", "sh", "-c", script], cwd=str(on_any.project), env=env)
        try:
            if script == QUIT_DIES:
                child.sendline("ping")
                child.expect_exact("ping\r\nping\r\n", timeout=60)  # the terminal's echo, then cat's
            else:
                child.expect_exact("armed\r\n", timeout=60)
            child.sendcontrol("\\")
            child.expect(pexpect.EOF, timeout=60)
        finally:
            child.close()
        assert (child.exitstatus, child.signalstatus) == (code, None), (script, child.before)
        assert ("got-quit" in child.before.decode()) == (code == 9), child.before

    child = pexpect.spawn(RIG, ["shell", "dev"], cwd=str(on_any.project), env=env, timeout=60)
    try:
        child.sendline("export PS1='in-ctr$ '")
        child.expect_exact("in-ctr$ ")
        quit_a_program_at_the_shell_and_exit_7(child)
    finally:
        child.close()
    assert (child.exitstatus, child.signalstatus) == (7, None)


def test_the_workspaces_history_lists_stop_start_and_operations_with_their_output(on_unix: Rig) -> None:
    on_unix.run("stop", "dev")
    on_unix.run("start", "dev")
    on_unix.run("start", "dev")  # already running: nothing done, nothing recorded
    on_unix.json("op", "dev", "status")
    history = on_unix.json("runs")["runs"]
    assert [(item["command"], item["workspace"]) for item in history] == [
        ("op status", "dev"),
        ("start", "dev"),
        ("stop", "dev"),
        ("create", "dev"),
        ("fork", "dev"),
        ("apply", None),
    ]
    assert {item["status"] for item in history} == {"succeeded"}
    shown = on_unix.json("logs", "--workspace", "dev")
    assert (shown["node_path"], shown["status"]) == ("dev/status", "succeeded")
    assert any(line["data"].endswith("tests passed") for line in shown["lines"]), shown
    created = on_unix.json("logs", "--workspace", "dev", "--run", history[3]["short_id"])
    assert created["node_path"] == "workspace:dev:create" and created["lines"], created  # the container made
    on_unix.run("rm", "dev", "--yes")
    assert on_unix.json("runs")["runs"][0]["command"] == "rm"
