"""``rig shell``/``rig exec`` in a container: an exec attached to rig's own stdio through a hijacked connection.

Like ``docker exec -i[t]``: the exec is created with stdin attached, started on a connection the
daemon hands over (``rawhttp.RawClient.upgrade``), and its bytes are copied both ways until the
program's output ends; its exit code then comes from the exec's inspect. With a terminal the
stream is raw (the program's pty, resized to rig's window and on every SIGWINCH); without one it
is Docker's framed stdout/stderr, and the end of rig's stdin closes the program's.

Signals sent to rig reach the program through a second exec that signals every process carrying
this exec's mark in its environment (inherited by its children), so no wrapper shell, no pid file
and nothing but the program itself runs for the common case.

The exec is journaled before it is created (an ``exec`` effect of the setup's journal, with rig's
pid), and the mark is the one a task's exec carries (``RIG_EXEC=<effect id>``, execution.py): a
rig killed while it runs leaves it journaled, and the next writer or ``rig gc`` ends every process
carrying the mark (``end_session``). Once the program's output ended, the effect is deleted.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from providers.docker.connection import Connection
from providers.docker.frames import FrameDecoder
from providers.docker.rawhttp import RawClient, Response
from rigcli.errors import ProviderError
from rigcli.provider_kit.interactive import STDIN, RawTerminal, forwarding_signals, write_all
from rigcli.speed.signals import signal_name

# Not typing.TYPE_CHECKING: rig shell/exec's lean path imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from rigcli.provider_api import EffectJournal

MARK = "RIG_EXEC_ID"  # the mark of an exec nothing journaled (a setup made outside rig's engine)
# execution.EXEC_VARIABLE, and provider_api.EXEC_EFFECT: spelled here, as this path imports neither
# (httpx's client, typing).
SESSION_VARIABLE, SESSION_KIND = "RIG_EXEC", "exec"
# bash when the image has it (a login shell, as `docker exec -it … bash -l` would give), else sh.
SHELL = ("sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l")
# Run by the second exec: $0 is the mark, $1 the signal's name.
_SIGNAL = (
    'for p in /proc/[0-9]*; do tr "\\0" "\\n" <"$p/environ" 2>/dev/null | grep -qx "$0" '
    '&& kill -"$1" "${p#/proc/}" 2>/dev/null; done; true'
)
_EXIT_SECONDS = 2.0  # how long the daemon may take to record the exit of a program whose output ended
_RESIZE_TRIES = 10  # the exec's process may not exist yet when the first resize arrives


def _failed(response: Response, what: str, container: str) -> ProviderError:
    if response.status == 404:
        return ProviderError(f"Docker container {container[:12]} is gone ({response.message()})")
    if response.status == 409:
        return ProviderError(f"Docker container {container[:12]} is not running ({response.message()})")
    return ProviderError(f"Docker {what} failed: {response.message()} (HTTP {response.status})")


def journaled_exec(resource: Mapping[str, object]) -> tuple[str | None, dict[str, str], str | None]:
    """The user, environment and working directory a container's commands get by default, as its
    create journaled them (``container_options``: ``exec_user``, ``exec_env``); none, for most."""
    found = resource.get("exec")
    if not isinstance(found, Mapping):
        return None, {}, None
    user, env, workdir = found.get("user"), found.get("env"), found.get("workdir")
    environment = {str(key): str(value) for key, value in env.items()} if isinstance(env, Mapping) else {}
    return (
        user if isinstance(user, str) and user else None,
        environment,
        workdir if isinstance(workdir, str) and workdir else None,
    )


def attach_exec(
    raw: RawClient,
    container: str,
    argv: Sequence[str] | None,
    *,
    tty: bool,
    env: Mapping[str, str],
    cwd: str | None,
    user: str | None = None,
    effects: EffectJournal,
) -> int:
    """Run ``argv`` (None: a shell) in ``container`` on rig's stdin, stdout and stderr; its exit code."""
    session = journal_session(effects, raw, container)
    try:
        created, mark = create_exec(raw, container, argv, tty=tty, env=env, cwd=cwd, user=user, session=session)
    except BaseException:
        effects.deleted(session)
        raise
    if created.status != 201:
        effects.deleted(session)
        raise _failed(created, "exec create", container)
    return run_exec(raw, container, str(created.json()["Id"]), mark, tty=tty, effects=effects, session=session)


def journal_session(effects: EffectJournal, raw: RawClient, container: str) -> str:
    """Journal an exec about to be created in ``container``; its effect id (raises when it cannot be)."""
    return effects.requested(SESSION_KIND, {"container_id": container, "host": raw.endpoint.host})


def create_exec(
    raw: RawClient,
    container: str,
    argv: Sequence[str] | None,
    *,
    tty: bool,
    env: Mapping[str, str],
    cwd: str | None,
    user: str | None = None,
    session: str | None = None,
) -> tuple[Response, str]:
    """Ask the daemon for the exec (nothing runs yet): its answer, and the mark its processes will
    carry (``session``'s, when it is journaled)."""
    # Not secrets: its import loads OpenSSL, for the same bytes.
    mark = f"{SESSION_VARIABLE}={session}" if session else f"{MARK}={os.urandom(8).hex()}"
    body: dict[str, object] = {
        "AttachStdin": True,
        "AttachStdout": True,
        "AttachStderr": True,
        "Tty": tty,
        "Cmd": list(argv) if argv else list(SHELL),
        "Env": [f"{key}={value}" for key, value in env.items()] + [mark],
    }
    if cwd:
        body["WorkingDir"] = cwd
    if user:
        body["User"] = user
    return raw.request("POST", f"/containers/{container}/exec", body=body), mark


def run_exec(
    raw: RawClient,
    container: str,
    exec_id: str,
    mark: str,
    *,
    tty: bool,
    effects: EffectJournal | None = None,
    session: str | None = None,
) -> int:
    """Start the created exec on rig's stdio and copy its bytes until its output ends; its exit code,
    or 128 + the first signal sent to rig (and passed on to the program) while it ran.
    ``session`` (journaled in ``effects``) is deleted once the output ended: the program did."""
    conn, started = raw.upgrade(f"/exec/{exec_id}/start", {"Detach": False, "Tty": tty})
    if started.status not in (101, 200):
        raise _failed(started, "exec start", container)

    passed: list[int] = []  # signals sent to rig and passed on: the command was interrupted

    def forward(signum: int) -> None:
        passed.append(signum)
        _signal(raw, container, mark, signal_name(signum)[3:])

    try:
        with forwarding_signals(forward):
            if tty:
                with RawTerminal(STDIN) as terminal:
                    resize = _resizer(raw, exec_id, terminal)
                    resize()
                    _pump(conn, started.leftover, tty=True, terminal=terminal, on_resize=resize)
            else:
                _pump(conn, started.leftover, tty=False, terminal=None, on_resize=None)
    finally:
        conn.close()
    if effects is not None and session is not None:
        effects.deleted(session)
    code = _exit_code(raw, exec_id)
    return 128 + passed[0] if passed else code


def _resizer(raw: RawClient, exec_id: str, terminal: RawTerminal) -> Callable[[], None]:
    def resize() -> None:
        rows, columns = terminal.size()
        for attempt in range(_RESIZE_TRIES):
            response = raw.request("POST", f"/exec/{exec_id}/resize", params={"h": rows, "w": columns})
            if response.status in (200, 201, 204) or response.status == 404:
                return
            time.sleep(0.01 * (attempt + 1))

    return resize


def _signal(raw: RawClient, container: str, mark: str, name: str) -> None:
    """Send SIG``name`` to every process of the exec (best effort: the program may have ended)."""
    with contextlib.suppress(ProviderError, KeyError, ValueError):
        created = raw.request(
            "POST",
            f"/containers/{container}/exec",
            body={"AttachStdout": False, "AttachStderr": False, "Cmd": ["sh", "-c", _SIGNAL, mark, name]},
        )
        if created.status == 201:
            raw.request("POST", f"/exec/{created.json()['Id']}/start", body={"Detach": True, "Tty": False})


def _feed(conn: Connection, stop: int) -> None:
    """rig's stdin to the program until its end (then the program's stdin is closed) or ``stop``."""
    try:
        while True:
            readable, _, _ = select.select([STDIN, stop], [], [])
            if stop in readable:
                return
            try:
                data = os.read(STDIN, 64 * 1024)
            except OSError:
                data = b""
            if not data:
                conn.close_write()
                return
            conn.send(data)
    except (OSError, ValueError):
        conn.close_write()  # no stdin at all (closed): the program reads its end at once


def _pump(
    conn: Connection,
    first: bytes,
    *,
    tty: bool,
    terminal: RawTerminal | None,
    on_resize: Callable[[], None] | None,
) -> None:
    """Copy the program's output to rig's stdout (and stderr) until it ends, feeding stdin meanwhile."""
    decoder = None if tty else FrameDecoder()

    def show(data: bytes) -> None:
        if decoder is None:
            write_all(1, data)
            return
        for stream, chunk in decoder.feed(data):
            write_all(1 if stream == "stdout" else 2, chunk)

    stop_read, stop_write = os.pipe()
    feeder = threading.Thread(target=_feed, args=(conn, stop_read), name="rig-exec-stdin", daemon=True)
    feeder.start()
    try:
        if first:
            show(first)
        watched = [conn.fileno()] + ([terminal.resized] if terminal is not None else [])
        while True:
            if not conn.ready():
                readable, _, _ = select.select(watched, [], [])
                if terminal is not None and terminal.resized in readable:
                    if terminal.take_resize() and on_resize is not None:
                        on_resize()
                    if conn.fileno() not in readable:
                        continue
            data = conn.recv()
            if not data:
                return
            show(data)
    finally:
        os.write(stop_write, b"x")
        feeder.join(timeout=1.0)
        for fd in (stop_read, stop_write):
            with contextlib.suppress(OSError):
                os.close(fd)


def _exit_code(raw: RawClient, exec_id: str) -> int:
    """The program's exit code (a death by signal N is 128 + N, as the runtime reports it)."""
    delay, deadline = 0.001, time.monotonic() + _EXIT_SECONDS
    while True:
        response = raw.request("GET", f"/exec/{exec_id}/json")
        if response.status != 200:
            raise ProviderError(f"Docker exec inspect failed: {response.message()} (HTTP {response.status})")
        info = response.json()
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        if time.monotonic() > deadline:
            raise ProviderError(f"Docker exec {exec_id[:12]} did not report an exit code")
        # The stream can end a moment before the daemon records the exit: usually a millisecond.
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


__all__ = ["MARK", "SHELL", "attach_exec", "create_exec", "journal_session", "journaled_exec", "run_exec"]
