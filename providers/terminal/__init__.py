"""The ``terminal`` provider: run an interactive command (``gh auth login``) in the user's terminal.

``open(title, command, machine=None, instructions=None)`` hands the terminal to ``command``
through the host (``context.local.run``), which pauses rig's live view while it runs: on the
host in the project directory, in a local machine's directory, or inside a docker machine via
``docker exec -it`` (the docker CLI must be on PATH). It completes when the command exits 0.
Without an interactive terminal it fails at once instead of waiting for input that cannot come.
"""

from __future__ import annotations

import secrets
import shutil

from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import EventData, ProviderPlugin, ProviderSetup, RuntimeContext
from rigcli.provider_kit import AttachSpec

PROVIDER_ID = "terminal"


class TerminalRuntime:
    """What handlers receive as the terminal provider."""

    def __init__(self, setup: ProviderSetup, context: RuntimeContext) -> None:
        self._setup = setup
        self._context = context

    def open(self, title: str, command: str, machine: object = None, instructions: str | None = None) -> JsonObject:
        """Run ``command`` attached to the user's terminal; returns once it has exited 0."""
        if not isinstance(title, str) or not title.strip():
            raise ProviderError("terminal open() needs a title")
        if not isinstance(command, str) or not command.strip():
            raise ProviderError(f'Interactive command "{title}" needs a non-empty command')
        local = self._context.local
        if not local.interactive:
            msg = (
                f'Interactive command "{title}" needs a terminal, and no interactive terminal is available '
                "(run rig from a terminal to do this step)"
            )
            raise ProviderError(msg)
        spec = self._spec(title, command, machine)
        interaction_id = f"term-{secrets.token_hex(6)}"
        self._emit(
            {
                "type": "interaction.awaiting_user",
                "interaction_id": interaction_id,
                "title": title,
                "url": None,
                "instructions": instructions,
            }
        )
        exit_code = local.run(list(spec.argv), cwd=spec.cwd, env=dict(spec.env))
        self._emit(
            {
                "type": "interaction.completed",
                "interaction_id": interaction_id,
                "title": title,
                "instructions": instructions,
                "exit_code": exit_code,
            }
        )
        if exit_code != 0:
            raise ProviderError(f'Interactive command "{title}" exited {exit_code}')
        return {"finished": True, "exit_code": 0}

    def _spec(self, title: str, command: str, machine: object) -> AttachSpec:
        if machine is None:
            return AttachSpec(("sh", "-c", command), cwd=self._setup.project_dir)
        attach: object = getattr(machine, "attach", None)  # any machine with attach(command) -> AttachSpec
        if not callable(attach):
            raise ProviderError(f'Interactive command "{title}": {machine!r} is not a machine rig can open')
        spec = attach(command)
        if not isinstance(spec, AttachSpec):
            raise ProviderError(f'Interactive command "{title}": the machine gave no way to attach a terminal')
        if spec.argv and spec.argv[0] == "docker" and shutil.which("docker") is None:
            msg = f'Interactive command "{title}" runs in a docker machine, which needs the docker CLI on PATH'
            raise ProviderError(msg)
        return spec

    def _emit(self, event: EventData) -> None:
        self._context.emit({**event, "node_path": self._context.node_path})


class TerminalController:
    provider_id = PROVIDER_ID

    def __init__(self, setup: ProviderSetup) -> None:
        self.setup = setup

    def runtime(self, context: RuntimeContext) -> TerminalRuntime:
        return TerminalRuntime(self.setup, context)


class TerminalPlugin:
    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> TerminalController:
        return TerminalController(setup)


plugin: ProviderPlugin = TerminalPlugin()

__all__ = ["TerminalController", "TerminalPlugin", "TerminalRuntime", "plugin"]
