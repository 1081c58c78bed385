"""Exec in a container: decode the multiplexed stream live and stop the command's whole process tree.

Every exec is journaled as an ``exec`` effect before it is created: its processes carry
``RIG_EXEC=<effect id>`` in their environment and its process group is written to
``/tmp/.rig-exec-<id>`` in the container, so a session whose rig was killed (nothing left to stop
it) is found and ended later (``end_session``, through ``remove_effect``). A session that ended
is marked deleted.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.frames import FrameDecoder
from rigcli.errors import InterruptedRunError, ProviderError
from rigcli.provider_api import EXEC_EFFECT, Cancellation, EffectJournal
from rigcli.provider_kit import CommandRecorder, CommandResult
from rigcli.timeouts import Bound, read_bound

GRACE_SECONDS = 2.0
_ABANDON_SECONDS = 10.0  # dockerd itself waits a few seconds for orphans before closing an exec's output
# Signals are sent while Ctrl-C is being handled and at exit: a daemon that stopped answering
# must not hold rig there for a whole read bound.
_SIGNAL_SECONDS = 10.0
# The exec'd process leads its own process group inside the container; recording its pid lets
# a second exec signal that whole group (grandchildren included). busybox `kill` takes -PGID
# but not `--`, so the form below is the portable one.
_WRAPPER = '{ echo $$ >"$0"; } 2>/dev/null; sh -c "$1"; rc=$?; rm -f "$0"; exit $rc'
_SIGNAL = (
    'p=$(cat "$0" 2>/dev/null); [ -n "$p" ] || { echo "$2"; exit 0; }; '
    'kill -"$1" -"$p" 2>/dev/null; [ "$1" = KILL ] && rm -f "$0"; true'
)
_NOT_STARTED = "rig-exec-not-started"  # what _SIGNAL prints when the command has recorded no pid (yet)
# A busy engine (Podman under load) can start an exec's process seconds after it was asked to, after
# the SIGKILL even: until the stream ends or rig gives up, SIGKILL is sent again this often.
_RETRY_SECONDS = 0.5
EXEC_VARIABLE = "RIG_EXEC"
# Ends a session left by a rig that is gone: its process group, then anything else carrying its
# RIG_EXEC mark (a process that left the group); TERM first, KILL what is left a moment later.
# Prints how many processes it found. Only /proc, tr, grep and kill: busybox has them.
_END_SESSION = """
mark="$1=$2"
found() {
  p=$(cat "$0" 2>/dev/null) && [ -n "$p" ] && kill -0 -"$p" 2>/dev/null && echo "-$p"
  for d in /proc/[0-9]*; do
    tr '\\0' '\\n' < "$d/environ" 2>/dev/null | grep -qx "$mark" && echo "${d#/proc/}"
  done
}
first=$(found | wc -l)
for p in $(found); do kill -TERM "$p" 2>/dev/null; done
i=0
while [ "$i" -lt 20 ] && [ -n "$(found)" ]; do sleep 0.1; i=$((i + 1)); done
for p in $(found); do kill -KILL "$p" 2>/dev/null; done
rm -f "$0"
echo "$first"
"""


def run_exec(
    client: DockerClient,
    container: str,
    command: str,
    *,
    env: Mapping[str, str],
    cwd: str,
    timeout: float | None,
    recorder: CommandRecorder,
    cancellation: Cancellation,
    effects: EffectJournal,
    grace: float = GRACE_SECONDS,
    user: str | None = None,
) -> CommandResult:
    """Run ``sh -c command`` in the container; on timeout, cancel or Ctrl-C its process group dies."""
    session = effects.requested(EXEC_EFFECT, {"container_id": container, "host": client.host})
    pidfile = pidfile_of(session)
    created = client.json(
        "POST",
        f"/containers/{container}/exec",
        what="exec create",
        json={
            "AttachStdin": False,
            "AttachStdout": True,
            "AttachStderr": True,
            "Tty": False,
            "Cmd": ["sh", "-c", _WRAPPER, pidfile, command],
            "Env": [*(f"{key}={value}" for key, value in env.items()), f"{EXEC_VARIABLE}={session}"],
            "WorkingDir": cwd,
            **({"User": user} if user else {}),
        },
    )
    exec_id = created["Id"]
    recorder.started()
    chunks: queue.Queue[tuple[str, bytes] | BaseException | None] = queue.Queue(maxsize=64)
    reader = threading.Thread(
        target=_read_stream, args=(client, exec_id, chunks), name=f"rig-docker-exec-{exec_id[:12]}", daemon=True
    )
    cancelled = threading.Event()
    stopper = _Stopper(client, container, pidfile, grace)

    def on_cancel() -> None:
        cancelled.set()
        # Signalled here, on the interrupting thread, not later from ours: after Ctrl-C rig exits
        # without waiting for handler threads, and the command must not outlive it.
        stopper.terminate_quietly()

    with client.running(stopper):
        remove_callback = cancellation.add_callback(on_cancel)
        reader.start()
        try:
            timed_out = _pump(chunks, recorder, timeout, cancelled, stopper)
            if stopper.signalled and not stopper.killed:
                stopper.finish()  # leftovers that ignored SIGTERM and do not hold the stream
        except BaseException:
            stopper.stop_now(chunks)
            raise
        finally:
            remove_callback()
        exit_code = _exit_code(client, exec_id, stopped=stopper.signalled)
    effects.deleted(session)  # it ended (a rig killed before this leaves it to end_session)
    # The run's flag, not only our callback's: cancel() sets it before running any callback, and the
    # client's own callback (registered first) can end this exec before ours has run.
    was_cancelled = (cancelled.is_set() or cancellation.is_set()) and not timed_out
    result = recorder.finish(exit_code, timed_out=timed_out, cancelled=was_cancelled)
    if was_cancelled:
        raise InterruptedRunError(f"Command {result.label} was interrupted")
    return result


def _signal_bound() -> Bound:
    """A signal's requests: RIG_READ_TIMEOUT, at most _SIGNAL_SECONDS."""
    return read_bound().at_most(_SIGNAL_SECONDS)


def pidfile_of(session: str) -> str:
    """Where an exec session's process group is written in its container."""
    return f"/tmp/.rig-{session}"


def end_session(client: DockerClient, container: str, session: str) -> bool:
    """End what is left of an exec session (its rig is gone): True when the container was there
    to look in (whether or not anything still ran), False when it is gone (so is the session)."""
    created = client.request(
        "POST",
        f"/containers/{container}/exec",
        what="exec create",
        ok=(201, 404, 409),  # 404: no such container; 409: it is not running
        json={
            "AttachStdout": True,
            "AttachStderr": True,
            "Tty": False,
            "Cmd": ["sh", "-c", _END_SESSION, pidfile_of(session), EXEC_VARIABLE, session],
        },
        bound=_signal_bound(),
    )
    if created.status_code != 201:
        return False
    client.request(
        "POST",
        f"/exec/{created.json()['Id']}/start",
        json={"Detach": False, "Tty": False},
        what="exec start",
        bound=_signal_bound(),
    )
    return True


def _read_stream(client: DockerClient, exec_id: str, chunks: queue.Queue[Any]) -> None:
    decoder = FrameDecoder()
    try:
        with client.stream("POST", f"/exec/{exec_id}/start", body={"Detach": False, "Tty": False}) as response:
            if response.status_code != 200:
                chunks.put(client.error(response, "exec start"))
                return
            for data in response.iter_raw():
                for item in decoder.feed(data):
                    chunks.put(item)
        chunks.put(None)
    except BaseException as exc:  # handed to the caller's thread, which raises it
        chunks.put(exc)


class _Stopper:
    """Signals the exec'd process group from a second exec: TERM, then KILL after the grace period.

    Clocks start when a signal has been delivered: while orphans still hold an exec's output
    the daemon can take seconds to answer, and that time is not the command's grace. Any thread
    may signal (the interrupting one does); each signal is sent once, except a SIGKILL that
    found no process: the engine may not have started it yet, so it is sent again until the
    stream ends or rig gives the command up.
    """

    def __init__(self, client: DockerClient, container: str, pidfile: str, grace: float) -> None:
        self.client = client
        self.container = container
        self.pidfile = pidfile
        self.grace = grace
        self.kill_at: float | None = None
        self.killed_at: float | None = None
        self.signalled = False
        self._retry_at: float | None = None  # SIGKILL found no process: look again then
        self._lock = threading.Lock()

    @property
    def killed(self) -> bool:
        return self.killed_at is not None

    def terminate(self) -> None:
        with self._lock:
            if self.kill_at is not None:
                return
            self.kill_at = float("inf")  # set before the call so a slow daemon is not asked twice
        try:
            self._signal("TERM")
        finally:  # even when it failed: the clock must run, or nothing would ever move on to KILL
            self.kill_at = time.monotonic() + self.grace

    def terminate_quietly(self) -> None:
        with contextlib.suppress(ProviderError):
            self.terminate()

    def kill_quietly(self) -> None:
        with contextlib.suppress(ProviderError):
            self.finish()

    def tick(self) -> None:
        now = time.monotonic()
        if self.kill_at is not None and not self.killed and now >= self.kill_at:
            self.finish()
        elif self._retry_at is not None and now >= self._retry_at and not self.given_up():
            self._retry_at = None
            self._kill()

    def finish(self) -> None:
        with self._lock:
            if self.killed_at is not None:
                return
            self.killed_at = float("inf")
        try:
            self._kill()
        finally:  # even when it failed, so that given_up() can end the wait
            self.killed_at = time.monotonic()

    def _kill(self) -> None:
        if not self._signal("KILL"):
            self._retry_at = time.monotonic() + _RETRY_SECONDS

    def given_up(self) -> bool:
        """Long after SIGKILL the stream is still open: something outside the group holds it."""
        return self.killed_at is not None and time.monotonic() >= self.killed_at + _ABANDON_SECONDS

    def stop_now(self, chunks: queue.Queue[Any]) -> None:
        """Used while unwinding: stop the command and wait (bounded) for its stream to end."""
        try:
            self.terminate()
            while not self.given_up():
                self.tick()
                try:
                    item = chunks.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is None or isinstance(item, BaseException):
                    break
            if not self.killed:
                self.finish()
        except ProviderError:
            pass  # the daemon went away too; nothing more we can stop from here

    def _signal(self, name: str) -> bool:
        """Send SIGname to the command's process group; False if the command has recorded no pid."""
        self.signalled = True
        created = self.client.json(
            "POST",
            f"/containers/{self.container}/exec",
            what="exec create",
            json={
                "AttachStdout": True,
                "AttachStderr": True,
                "Tty": False,
                "Cmd": ["sh", "-c", _SIGNAL, self.pidfile, name, _NOT_STARTED],
            },
            bound=_signal_bound(),
        )
        # Attached (not detached) so the signal has been sent by the time this returns.
        response = self.client.request(
            "POST",
            f"/exec/{created['Id']}/start",
            json={"Detach": False, "Tty": False},
            what="exec start",
            bound=_signal_bound(),
        )
        output = b"".join(data for _, data in FrameDecoder().feed(response.content))
        return _NOT_STARTED.encode() not in output


def _pump(
    chunks: queue.Queue[Any],
    recorder: CommandRecorder,
    timeout: float | None,
    cancelled: threading.Event,
    stopper: _Stopper,
) -> bool:
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    while True:
        if cancelled.is_set():
            stopper.terminate()
        if deadline is not None and not timed_out and time.monotonic() >= deadline:
            timed_out = True
            stopper.terminate()
        stopper.tick()
        if stopper.given_up():
            return timed_out  # the exit code still comes from the daemon; the rest of the output is lost
        try:
            # Short waits so a cancellation from another thread is noticed promptly.
            item = chunks.get(timeout=0.1)
        except queue.Empty:
            continue
        if item is None:
            return timed_out
        if isinstance(item, BaseException):
            raise item
        recorder.feed(*item)


def _exit_code(client: DockerClient, exec_id: str, *, stopped: bool) -> int:
    for _ in range(50):
        info = client.json("GET", f"/exec/{exec_id}/json", what="exec inspect")
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        time.sleep(0.02)  # the stream can end a moment before the daemon records the exit
    return 137 if stopped else 1


__all__ = ["EXEC_VARIABLE", "FrameDecoder", "end_session", "pidfile_of", "run_exec"]
