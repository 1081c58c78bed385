"""The host the CLI hands the engine: TerminalHost, with prompts that reach the terminal mid-run."""

from __future__ import annotations

import getpass

from rigcli.host import TerminalHost


class CliHost(TerminalHost):
    """Prompts from handlers write past the engine's output capture, with the live view paused."""

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        self._require_terminal(message)
        with self._paused():
            if secret:
                from rigcli.render.streams import real_stderr

                return getpass.getpass(f"{message}: ", stream=real_stderr())
            from rigcli.render.prompts import text

            return text(message, default=default)

    def confirm(self, message: str, *, default: bool = False) -> bool:
        self._require_terminal(message)
        with self._paused():
            from rigcli.render.prompts import confirm

            return confirm(message, default=default)


__all__ = ["CliHost"]
