"""The default host (``local``): open URLs, prompt, and run host commands under one consent policy.

Host-command consent, for every host built on TerminalHost (the CLI's and an embedding
host's default alike): an operation the user runs (``rig op``) is its own consent, so its
host commands only need a terminal; commands from tasks and workspace hooks are asked about
each time; ``RIG_TRUST_HOST_COMMANDS=1`` trusts them all.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal, overload

from rigcli.children import detached_env
from rigcli.errors import RigError
from rigcli.provider_api import CapturedRun
from rigcli.speed.lazy_modules import lazy_module
from rigcli.streams import real_stderr, relaying, stderr_is_terminal, stdout_is_terminal

if TYPE_CHECKING:
    import codecs
    import fcntl
    import getpass
    import pty
    import selectors
    import shlex
    import shutil
    import subprocess
    import termios
else:
    codecs = lazy_module("codecs")
    fcntl = lazy_module("fcntl")
    getpass = lazy_module("getpass")
    pty = lazy_module("pty")
    selectors = lazy_module("selectors")
    shlex = lazy_module("shlex")
    shutil = lazy_module("shutil")
    subprocess = lazy_module("subprocess")
    termios = lazy_module("termios")


# Set while an operation the user named runs; handler threads copy it with their context.
_OPERATION_CONSENT: contextvars.ContextVar[bool] = contextvars.ContextVar("rig_operation_consent", default=False)


@contextlib.contextmanager
def operation_consent() -> Iterator[None]:
    """Host commands started while the block runs belong to an operation the user asked for."""
    token = _OPERATION_CONSENT.set(True)
    try:
        yield
    finally:
        _OPERATION_CONSENT.reset(token)


def trusts_host_commands() -> bool:
    return os.environ.get("RIG_TRUST_HOST_COMMANDS") == "1"


def stdio_is_terminal() -> bool:
    return sys.stdin.isatty() and stderr_is_terminal()


class TerminalHost:
    """LocalHost for a process that may own a terminal; used by the CLI and as the engine default.

    ``pause`` is a hook the renderer sets so a live display stops drawing while a command
    or prompt owns the terminal.
    """

    def __init__(
        self, *, interactive: bool | None = None, pause: Callable[[], AbstractContextManager[object]] | None = None
    ) -> None:
        self._interactive = stdio_is_terminal() if interactive is None else interactive
        self.pause = pause

    @property
    def interactive(self) -> bool:
        return self._interactive

    def open(self, target: str) -> None:
        stderr = real_stderr()  # inside a handler sys.stderr is the capture; the user must see this
        stderr.write(f"Open {target}\n")
        stderr.flush()
        if os.environ.get("RIG_NO_BROWSER") == "1":
            return
        opener = _platform_opener()
        if opener is None:
            return

        with contextlib.suppress(OSError):  # the URL is already printed; a missing opener is fine
            subprocess.Popen(
                [*opener, target],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=detached_env(),  # the browser it starts must outlive rig
            )

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        self._require_terminal(message)
        with self._paused():
            if secret:
                return getpass.getpass(f"{message}: ", stream=real_stderr())
            suffix = f" [{default}]" if default else ""
            stderr = real_stderr()
            stderr.write(f"{message}{suffix}: ")
            stderr.flush()
            answer = sys.stdin.readline().strip()
            return answer or (default or "")

    def confirm(self, message: str, *, default: bool = False) -> bool:
        hint = "Y/n" if default else "y/N"
        answer = self.prompt(f"{message} ({hint})").strip().lower()
        if not answer:
            return default
        return answer in {"y", "yes"}

    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[False] = False,
    ) -> int: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[True],
    ) -> CapturedRun: ...
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: bool = False,
    ) -> int | CapturedRun:
        """Run a command on this host, attached to the terminal, once the consent policy allows it;
        with ``capture``, off the terminal, returning its exit code and masked output."""

        if not argv:
            raise RigError("Local command argv must not be empty")
        command = shlex.join(argv)
        if not trusts_host_commands():
            if _OPERATION_CONSENT.get():
                self._require_terminal(command)
            elif not self.interactive:
                raise RigError(
                    "Host command requires confirmation in an interactive terminal "
                    f"(or RIG_TRUST_HOST_COMMANDS=1): {command}"
                )
            elif not self.confirm(f"Run on this host: {command}", default=True):
                raise RigError(f"Host command denied: {command}")
        # stdout belongs to rig's result (one JSON document, or a name); off a terminal the
        # command's own output goes to stderr with the rest of the run's output. Either way it
        # reaches fd 1 or 2, which rig relays through the secret masker (streams.OutputRelay).
        full_env = {**os.environ, **(env or {})}
        if capture:
            done = subprocess.run(list(argv), cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, capture_output=True)
            return {"exit_code": done.returncode, "stdout": _shown(done.stdout), "stderr": _shown(done.stderr)}
        with self._paused():
            if stdout_is_terminal() and relaying() and sys.stdin.isatty():
                return _run_on_terminal(list(argv), cwd=cwd, env=full_env)
            stdout = None if stdout_is_terminal() else 2
            return subprocess.call(list(argv), cwd=cwd, env=full_env, stdout=stdout)

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        """The answer of the handle the project or a plugin defined for ``capability_id``."""
        from rigcli.authoring.capabilities import request_capability

        return request_capability(capability_id, params)

    def _require_terminal(self, what: str) -> None:
        if not self._interactive:
            raise RigError(f"{what!r} needs an interactive terminal, and this run has none")

    def _paused(self) -> AbstractContextManager[object]:
        if self.pause is None:
            return contextlib.nullcontext()
        return self.pause()


def _shown(output: bytes) -> str:
    """A captured command's output as project code may keep it: text, secrets masked."""
    from rigcli.masking import mask_text

    return mask_text(output.decode("utf-8", errors="replace"))


def _run_on_terminal(argv: list[str], *, cwd: str | None, env: dict[str, str]) -> int:
    """Run ``argv`` reading the user's terminal and writing to a pseudo-terminal whose output rig
    masks on its way to the real one: the command still sees a terminal on all three."""

    from rigcli.masking import StreamMasker

    terminal = real_stderr()
    terminal.flush()
    out = terminal.fileno()
    master, follower = pty.openpty()
    with contextlib.suppress(OSError):  # the command lays itself out for the user's window
        fcntl.ioctl(follower, termios.TIOCSWINSZ, fcntl.ioctl(out, termios.TIOCGWINSZ, b"\0" * 8))
    try:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=follower, stderr=follower)
    finally:
        os.close(follower)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    masker = StreamMasker()

    def show(text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        with contextlib.suppress(OSError):  # a terminal that went away: the command still finishes
            while data:
                data = data[os.write(out, data) :]

    selector = selectors.DefaultSelector()
    selector.register(master, selectors.EVENT_READ)
    try:
        while True:
            # Once the command has exited, what it left running may hold the pty: stop soon after.
            ready = selector.select(0.05 if process.poll() is not None else 0.2)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer is gone
                break
            if not data:
                break
            show(masker.feed(decoder.decode(data)))
        show(masker.feed(decoder.decode(b"", final=True)) + masker.flush())
        return process.wait()
    finally:
        selector.close()
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()


def _platform_opener() -> list[str] | None:
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform.startswith("win"):
        return ["cmd", "/c", "start", ""]

    opener = shutil.which("xdg-open")
    return [opener] if opener else None


__all__ = ["TerminalHost", "operation_consent", "stdio_is_terminal", "trusts_host_commands"]
