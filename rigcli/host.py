"""The default host (``local``) capabilities: open URLs, prompt, run attached commands."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rigcli.errors import RigError
from rigcli.streams import real_stderr


def stdio_is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


class TerminalHost:
    """LocalHost for a process that may own a terminal; used by the CLI and as the engine default.

    ``pause`` is a hook the renderer sets so a live display stops drawing while a command
    or prompt owns the terminal.
    """

    def __init__(self, *, interactive: bool | None = None, pause: Callable[[], Any] | None = None) -> None:
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
            )

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        self._require_terminal(message)
        with self._paused():
            if secret:
                import getpass

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

    def run(self, argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None) -> int:
        if not argv:
            raise RigError("Local command argv must not be empty")
        self._require_terminal(" ".join(argv))
        with self._paused():
            merged = {**os.environ, **(env or {})}
            return subprocess.call(list(argv), cwd=cwd, env=merged)

    def _require_terminal(self, what: str) -> None:
        if not self._interactive:
            raise RigError(f"{what!r} needs an interactive terminal, and this run has none")

    def _paused(self) -> Any:
        if self.pause is None:
            return contextlib.nullcontext()
        return self.pause()


def _platform_opener() -> list[str] | None:
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform.startswith("win"):
        return ["cmd", "/c", "start", ""]
    opener = shutil.which("xdg-open")
    return [opener] if opener else None


__all__ = ["TerminalHost", "stdio_is_terminal"]
