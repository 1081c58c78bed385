"""The host the CLI hands the engine: Rich prompts that reach the terminal while a run is live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rigcli.host import TerminalHost
from rigcli.render.prompts import confirm, text
from rigcli.speed.lazy_modules import lazy_module
from rigcli.streams import real_stderr

if TYPE_CHECKING:
    import getpass
else:
    getpass = lazy_module("getpass")


class CliHost(TerminalHost):
    """Prompts write past the engine's output capture with the live view paused.

    Host commands follow TerminalHost's consent policy, the same one the engine's default host has.
    """

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        self._require_terminal(message)
        with self._paused():
            if secret:
                return getpass.getpass(f"{message}: ", stream=real_stderr())

            return text(message, default=default)

    def confirm(self, message: str, *, default: bool = False) -> bool:
        self._require_terminal(message)
        with self._paused():
            return confirm(message, default=default)


__all__ = ["CliHost"]
