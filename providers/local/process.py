"""Run one shell command in its own process group, streaming output; stop the whole group when asked."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping

from rigcli.errors import InterruptedRunError
from rigcli.provider_api import Cancellation
from rigcli.provider_kit import CommandRecorder, CommandResult, exit_status
from rigcli.speed.pipes import WIDE_PIPE_BYTES, widen_pipe

GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL
_POLL_SECONDS = 0.05  # child-exit polling where pidfd is unavailable (macOS, old kernels)
# A whole widened pipe per read: the work per read (an event, the renderers, the run buffer) is paid
# once per MiB instead of once per 64 KiB.
_READ_SIZE = WIDE_PIPE_BYTES
# A read of a page or more, but well short of the pipe, means we caught a bulk writer mid-stream:
# rather than pay a read's work per 4 KiB page (a fast reader keeps up with a fast writer one page
# at a time), wait a moment for the pipe to fill. A line now and then (under a page) is not kept
# waiting, and 1 ms is less than a writer needs to fill 1 MiB, so the writer does not stall.
_GATHER_FROM = 4096
_GATHER_BELOW = 64 * 1024
_GATHER_SECONDS = 0.001


class _Group:
    """The command's process group. The shell (its leader) is reaped only at the very end, so
    its pid, which is the group id, cannot be reused by an unrelated group we might signal."""

    def __init__(self, pgid: int, grace: float) -> None:
        self.pgid = pgid
        self.grace = grace
        self.kill_at: float | None = None
        self.killed = False

    def members(self) -> list[int] | None:
        """Live (non-zombie) processes in the group; None where /proc cannot tell."""
        try:
            names = os.listdir("/proc")
        except OSError:
            return None
        found = []
        for name in names:
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 2 and int(fields[2]) == self.pgid and fields[0] not in (b"Z", b"X"):
                found.append(int(name))
        return found

    def terminate(self) -> None:
        if self.kill_at is None:
            self.kill_at = time.monotonic() + self.grace
            self._signal(signal.SIGTERM)

    def tick(self) -> None:
        if self.kill_at is not None and not self.killed and time.monotonic() >= self.kill_at:
            self.killed = True
            self._signal(signal.SIGKILL)

    def given_up(self) -> bool:
        """SIGKILL went out a grace period ago: whatever still holds our pipes escaped the group."""
        return self.killed and time.monotonic() >= (self.kill_at or 0.0) + self.grace

    def clear(self) -> None:
        """Make sure nothing of the group is left: SIGTERM, a bounded wait, then SIGKILL."""
        members = self.members()
        if members is None:
            self._signal(signal.SIGKILL)  # cannot watch the group here; leave nothing behind
            return
        if not members:
            return
        self.terminate()
        if self._wait_empty(self.kill_at or 0.0):
            return
        self.killed = True
        self._signal(signal.SIGKILL)
        self._wait_empty(time.monotonic() + self.grace)

    def _wait_empty(self, until: float) -> bool:
        while self.members():
            if time.monotonic() >= until:
                return False
            time.sleep(0.02)
        return True

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)


def _has_exited(pid: int) -> bool:
    """True once ``pid`` has exited, without reaping it (the zombie keeps the group id reserved)."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _exit_fd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def run_command(
    command: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float | None,
    recorder: CommandRecorder,
    cancellation: Cancellation,
    grace: float = GRACE_SECONDS,
) -> CommandResult:
    """Run ``sh -c command``; on timeout, cancellation or KeyboardInterrupt the process group dies.

    When the shell exits, anything it left running in its group is stopped too: nothing a
    command starts outlives it (a process that must stay up has to leave the group itself).
    """
    recorder.started()
    proc = subprocess.Popen(
        ["sh", "-c", command],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        bufsize=0,
    )
    # A chatty command wakes us every MiB, not every 64 KiB; only a wide pipe has room to gather in.
    wide = all([widen_pipe(stream.fileno()) for stream in (proc.stdout, proc.stderr) if stream is not None])
    group = _Group(proc.pid, grace)
    cancelled: list[bool] = []
    wake_read, wake_write = os.pipe()

    def request_stop() -> None:
        cancelled.append(True)
        with contextlib.suppress(OSError):
            os.write(wake_write, b"x")  # wakes the select() below from another thread

    remove_callback = cancellation.add_callback(request_stop)
    try:
        timed_out = _pump(proc, group, recorder, timeout, cancelled, wake_read, gather=wide)
        group.clear()
    except BaseException:
        group.clear()
        raise
    finally:
        remove_callback()
        proc.wait()
        for fd in (wake_read, wake_write):
            os.close(fd)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    was_cancelled = bool(cancelled) and not timed_out
    result = recorder.finish(exit_status(proc.returncode), timed_out=timed_out, cancelled=was_cancelled)
    if was_cancelled:
        raise InterruptedRunError(f"Command {result.label} was interrupted")
    return result


def _pump(
    proc: subprocess.Popen[bytes],
    group: _Group,
    recorder: CommandRecorder,
    timeout: float | None,
    cancelled: list[bool],
    wake_fd: int,
    *,
    gather: bool,
) -> bool:
    """Move output to the recorder until the pipes close and the shell has exited; True on timeout.

    ``gather``: the pipes are wide enough to let a bulk writer's output gather between reads.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    exited = False
    exit_fd = _exit_fd(proc.pid)
    selector = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    selector.register(proc.stdout.fileno(), selectors.EVENT_READ, "stdout")
    selector.register(proc.stderr.fileno(), selectors.EVENT_READ, "stderr")
    selector.register(wake_fd, selectors.EVENT_READ, "wake")
    if exit_fd is not None:
        selector.register(exit_fd, selectors.EVENT_READ, "exit")
    open_streams = 2
    try:
        while open_streams or not exited:
            if not exited and _has_exited(proc.pid):
                exited = True
                if open_streams:
                    group.terminate()  # the shell is gone; what it left behind holds our pipes open
            if cancelled:
                group.terminate()
            if deadline is not None and not timed_out and time.monotonic() >= deadline:
                timed_out = True
                group.terminate()
            group.tick()
            if exited and (not open_streams or group.given_up()):
                break
            caught_mid_stream = False
            for key, _ in selector.select(_wait_time(deadline, timed_out, group, exit_fd, exited)):
                if key.data in ("stdout", "stderr"):
                    data = os.read(key.fd, _READ_SIZE)
                    if data:
                        recorder.feed(key.data, data)
                        caught_mid_stream = caught_mid_stream or _GATHER_FROM <= len(data) < _GATHER_BELOW
                    else:
                        selector.unregister(key.fd)
                        open_streams -= 1
                elif key.data == "wake":
                    os.read(wake_fd, 64)
                else:
                    selector.unregister(key.fd)
            if gather and caught_mid_stream:
                time.sleep(_GATHER_SECONDS)
    finally:
        selector.close()
        if exit_fd is not None:
            os.close(exit_fd)
    return timed_out


def _wait_time(
    deadline: float | None, timed_out: bool, group: _Group, exit_fd: int | None, exited: bool
) -> float | None:
    now = time.monotonic()
    waits = []
    if deadline is not None and not timed_out:
        waits.append(deadline - now)
    if group.kill_at is not None and not group.killed:
        waits.append(group.kill_at - now)
    elif group.killed:
        waits.append(max(_POLL_SECONDS, (group.kill_at or now) + group.grace - now))
    if exit_fd is None and not exited:
        waits.append(_POLL_SECONDS)
    return max(0.0, min(waits)) if waits else None


__all__ = ["GRACE_SECONDS", "run_command"]
