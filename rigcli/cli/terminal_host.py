"""The host the CLI hands the engine: prompts that reach the terminal mid-run, approved host commands."""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence

from rigcli.errors import RigError
from rigcli.host import TerminalHost


class CliHost(TerminalHost):
    """Prompts write past the engine's output capture with the live view paused; ``run`` asks first.

    ``consented`` is set while an operation the user named runs (``rig op``): running it is the
    consent. Host commands from tasks and hooks (apply, fork, rm) are asked about each time,
    unless RIG_TRUST_HOST_COMMANDS=1.
    """

    consented = False

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        self._require_terminal(message)
        with self._paused():
            if secret:
                from rigcli.streams import real_stderr

                return getpass.getpass(f"{message}: ", stream=real_stderr())
            from rigcli.render.prompts import text

            return text(message, default=default)

    def confirm(self, message: str, *, default: bool = False) -> bool:
        self._require_terminal(message)
        with self._paused():
            from rigcli.render.prompts import confirm

            return confirm(message, default=default)

    def run(self, argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None) -> int:
        """Run a command on this host, attached to the terminal, once the user agreed (or trusts all)."""
        if not argv:
            raise RigError("Local command argv must not be empty")
        command = shlex.join(argv)
        if self.consented and os.environ.get("RIG_TRUST_HOST_COMMANDS") != "1":
            self._require_terminal(command)
        elif os.environ.get("RIG_TRUST_HOST_COMMANDS") != "1":
            if not self.interactive:
                raise RigError(
                    f"Host command requires confirmation in an interactive terminal (or RIG_TRUST_HOST_COMMANDS=1): "
                    f"{command}"
                )
            if not self.confirm(f"Run on this host: {command}", default=True):
                raise RigError(f"Host command denied: {command}")
        from rigcli.streams import real_stderr, real_stdout

        # stdout belongs to rig's result (one JSON document, or a name); off a terminal the
        # command's own output goes to stderr with the rest of the run's output.
        stdout = None if real_stdout().isatty() else real_stderr()
        with self._paused():
            return subprocess.call(list(argv), cwd=cwd, env={**os.environ, **(env or {})}, stdout=stdout)


__all__ = ["CliHost"]
