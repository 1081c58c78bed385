"""What many test modules share: whether a process still runs, waiting for a condition, the run journal as rows,
what a rig process imported."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.backends import rows


def alive(pid: int) -> bool:
    """The process runs: it exists and is not a zombie (dead, waiting for its parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30, interval: float = 0.02) -> None:
    """Poll until ``predicate()`` holds; fail, naming ``what``, after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(interval)


def runs(location: str | Path, *columns: str) -> list[tuple[Any, ...]]:
    """The run journal of the state at ``location`` (a SQLite path or a PostgreSQL URL), read with
    its driver, not through rig: ``columns`` (default node path and status) of every run, in order."""
    chosen = ", ".join(columns or ("node_path", "status"))
    return rows(location, f"SELECT {chosen} FROM workflow_node_runs ORDER BY {chosen}")


# At an interactive shell's prompt: a subshell that traps Ctrl-\ (the shell itself ignores SIGQUIT),
# and the shell goes on. Short sleeps: whenever the signal comes, the trap ends the subshell at once.
QUIT_IN_SHELL = (
    "(ulimit -c 0; trap 'echo got-quit; exit 9' QUIT; echo armed; while :; do sleep 0.1; done); echo sub-ended $?"
)


def quit_a_program_at_the_shell_and_exit_7(child: Any) -> None:
    """In a ``rig shell`` (a pexpect child at its prompt): Ctrl-\\ reaches the subshell's trap, the
    shell goes on, then exits 7."""
    import pexpect

    child.sendline(QUIT_IN_SHELL)
    child.expect_exact("\r\narmed\r\n")
    child.sendcontrol("\\")
    child.expect_exact("got-quit\r\nsub-ended 9\r\n")
    child.sendline("exit 7")
    child.expect(pexpect.EOF)


TERMINAL_SHELL = """

from rigcli import define_provider as _define_provider


def _terminal_shell(workspace, box, terminal):
    machine = box.from_id(workspace.ctx["machine"])
    return terminal.open(f"Shell in {workspace.name}", 'exec "${SHELL:-sh}"', machine=machine)


workflows = workflows.add_provider("terminal", _define_provider("terminal")).workspace_operation(
    "terminal", run=_terminal_shell, title="Open $SHELL through the terminal provider"
)
"""


def with_terminal_shell(project: Path) -> None:
    """The example at ``project`` gains a workspace operation ``terminal``: a shell the terminal provider
    runs in the workspace's machine (the examples leave ``rig shell`` to rig itself)."""
    config = project / "rig_config.py"
    config.write_text(config.read_text(encoding="utf-8") + TERMINAL_SHELL, encoding="utf-8")


def imported_by_rig(importtime: str) -> set[str]:
    """The modules ``-X importtime`` shows, but for those Python's start imported (``site``, and an
    editable install's import hook under it, which imports pathlib)."""
    lines = [line.split("|")[-1] for line in importtime.splitlines() if line.startswith("import time:")][1:]
    found: set[str] = set()
    pending: list[str] = []  # a module's imports are listed before it, one level deeper
    for line in lines:
        name = line.strip()
        pending.append(name)
        if len(line) - len(line.lstrip()) == 1:  # a top-level import: it and what it imported
            if name != "site" and not name.startswith("__editable__"):
                found.update(pending)
            pending = []
    return found


__all__ = [
    "QUIT_IN_SHELL",
    "alive",
    "imported_by_rig",
    "quit_a_program_at_the_shell_and_exit_7",
    "runs",
    "wait_for",
    "with_terminal_shell",
]
