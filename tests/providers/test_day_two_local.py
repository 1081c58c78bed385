"""A local workspace after fork, through the installed ``rig``: live status, rm of a vanished one,
shell and exec with exit codes and streams, and stop/start refused in one line."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pexpect
import pytest
from e2e_support import RIG, Rig, copy_example, rig_env

from tests.helpers import quit_a_program_at_the_shell_and_exit_7


@pytest.fixture
def forked(tmp_path: Path) -> Rig:
    rig = Rig(copy_example("quickstart", tmp_path), rig_env(tmp_path))
    rig.json("apply")
    rig.json("fork", "dev")
    return rig


def workspace_json(rig: Rig, *args: str) -> dict[str, object]:
    (workflow,) = rig.json("ls", *args)["workflows"]
    (workspace,) = workflow["workspaces"]
    assert isinstance(workspace, dict)
    return workspace


def machine_dir(rig: Rig) -> Path:
    return Path(str(workspace_json(rig, "--no-probe")["ctx"]["path"]))  # type: ignore[index]


def test_ls_shows_a_local_machine_running_then_missing_once_its_directory_is_gone(forked: Rig) -> None:
    machine = machine_dir(forked)
    assert workspace_json(forked)["live"] == {
        "state": "running",
        "detail": f"directory .rig/machines/{machine.name}",
    }
    table = forked.run("ls").stdout
    assert "live" in table.splitlines()[3] and "running" in table

    shutil.rmtree(machine)
    assert workspace_json(forked)["live"] == {
        "state": "missing",
        "detail": f"directory .rig/machines/{machine.name} is gone",
    }
    assert "missing (directory" in forked.run("ls").stdout


def test_ls_no_probe_leaves_live_null(forked: Rig) -> None:
    shutil.rmtree(machine_dir(forked))
    workspace = workspace_json(forked, "--no-probe")
    assert workspace["live"] is None and workspace["status"] == "ready"


def test_rm_of_a_missing_workspace_needs_no_force(tmp_path: Path) -> None:
    # The project's remove hook fails on a vanished machine (it reads the machine's own file first):
    # before, only --force removed the workspace; a confirmed-missing machine now counts as removed.
    project = copy_example("quickstart", tmp_path)
    config = project / "rig_config.py"
    config.write_text(
        config.read_text().replace(
            '    box.delete_machine(workspace.ctx["machine"])',
            '    open(workspace.ctx["path"] + "/app/hello.py").close()\n'
            '    box.delete_machine(workspace.ctx["machine"])',
        )
    )
    rig = Rig(project, rig_env(tmp_path))
    rig.json("apply")
    rig.json("fork", "dev")
    shutil.rmtree(machine_dir(rig))
    done = rig.run("rm", "dev", "--yes", check=False)
    assert done.returncode == 0, done.stderr
    assert "its machine was already gone" in done.stderr
    assert rig.json("ls")["workflows"][0]["workspaces"] == []


def test_exec_passes_exit_codes_signals_and_streams_through(forked: Rig) -> None:
    machine = machine_dir(forked)
    ok = forked.run("exec", "dev", "--", "sh", "-c", 'pwd; echo "$RIG_MACHINE_ID"; echo oops >&2', check=False)
    assert ok.returncode == 0
    assert ok.stdout == f"{machine}\n{machine.name}\n" and ok.stderr == "oops\n"
    assert forked.run("exec", "dev", "--", "sh", "-c", "exit 3", check=False).returncode == 3
    assert forked.run("exec", "dev", "--", "sh", "-c", "kill -INT $$", check=False).returncode == 130
    piped = subprocess.run(
        [RIG, "exec", "dev", "--", "tr", "a-z", "A-Z"],
        cwd=forked.project,
        env=forked.env,
        input="piped through\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (piped.returncode, piped.stdout) == (0, "PIPED THROUGH\n")


def test_exec_in_a_vanished_machine_is_one_line(forked: Rig) -> None:
    shutil.rmtree(machine_dir(forked))
    done = forked.run("exec", "dev", "--", "true", check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: Workspace dev is missing: directory .rig/machines/{done.stderr.split('machines/')[1].split(' ')[0]} "
        "is gone; rig rm dev forgets it"
    ]


def test_local_has_nothing_to_stop(forked: Rig) -> None:
    for verb in ("stop", "start"):
        done = forked.run(verb, "dev", check=False)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            f"error: Workspace dev uses the local provider, which has nothing to {verb}"
        ]
    assert workspace_json(forked)["live"]["state"] == "running"  # type: ignore[index]


def test_shell_is_a_real_terminal_in_the_machine_directory(forked: Rig) -> None:
    machine = machine_dir(forked)
    env = {**forked.env, "SHELL": "/bin/sh", "PS1": "in-ws$ "}
    child = pexpect.spawn(RIG, ["shell", "dev"], cwd=str(forked.project), env=env, dimensions=(33, 101), timeout=30)
    try:
        child.expect_exact("in-ws$ ")
        child.sendline("pwd; stty size")
        child.expect_exact(f"{machine}\r\n33 101\r\n")
        child.setwinsize(40, 120)
        child.sendline("stty size")
        child.expect_exact("40 120\r\n")
        child.sendline("trap 'echo got-int' INT; echo armed; sleep 30")
        child.expect_exact("\r\narmed\r\n")  # the trap is set and sleep is starting (not the typed line)
        child.sendintr()  # Ctrl-C reaches the shell, not rig: rig stays, the shell says so
        child.expect_exact("got-int")
        child.sendline("exit 7")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 7


def _ignoring_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)


def test_exec_from_a_background_job_still_lets_the_program_take_an_interrupt(forked: Rig) -> None:
    """A job a non-interactive shell puts in the background starts with SIGINT and SIGQUIT ignored
    (CI runners do this); the program rig runs must not inherit that, as in a container it would not."""
    for command, code in (("kill -INT $$", 130), ("trap 'exit 7' INT; kill -INT $$; exit 1", 7)):
        done = subprocess.run(
            [RIG, "exec", "dev", "--", "sh", "-c", command],
            cwd=forked.project,
            env=forked.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_ignoring_interrupts,
        )
        assert done.returncode == code, (command, done.stderr)


# Ctrl-\ typed on rig's terminal: the program gets SIGQUIT, rig neither dumps nor dies of it, and rig
# exits with the program's code. `ulimit -c 0`: a program dying of SIGQUIT leaves no core file.
QUIT_DIES = "ulimit -c 0; echo armed; sleep 30"
QUIT_TRAPPED = "ulimit -c 0; trap 'echo got-quit; exit 9' QUIT; echo armed; sleep 30; exit 1"


@pytest.mark.parametrize(("script", "code"), [(QUIT_DIES, 128 + signal.SIGQUIT), (QUIT_TRAPPED, 9)])
def test_ctrl_backslash_in_exec_reaches_the_program_not_rig(forked: Rig, script: str, code: int) -> None:
    child = pexpect.spawn(RIG, ["exec", "dev", "--", "sh", "-c", script], cwd=str(forked.project), env=forked.env)
    try:
        child.expect_exact("armed\r\n", timeout=60)
        child.sendcontrol("\\")
        child.expect(pexpect.EOF, timeout=60)
    finally:
        child.close()
    assert (child.exitstatus, child.signalstatus) == (code, None), child.before
    assert ("got-quit" in child.before.decode()) == (code == 9), child.before


def test_ctrl_backslash_in_the_shell_reaches_its_program_and_the_shell_goes_on(forked: Rig) -> None:
    env = {**forked.env, "SHELL": "/bin/sh", "PS1": "in-ws$ "}
    child = pexpect.spawn(RIG, ["shell", "dev"], cwd=str(forked.project), env=env, timeout=60)
    try:
        child.expect_exact("in-ws$ ")
        quit_a_program_at_the_shell_and_exit_7(child)
    finally:
        child.close()
    assert (child.exitstatus, child.signalstatus) == (7, None)
