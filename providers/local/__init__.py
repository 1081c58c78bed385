"""The ``local`` provider: machines are plain directories under the project's .rig/ (NO isolation).

Commands run as the calling user, directly on the host, with the machine directory as their
working directory. Nothing stops a command from reading or changing anything else the user can
reach. Use the ``docker`` provider when you need a boundary. What this provider does give:

- ``exec`` runs ``sh -c`` in its own process group, streams output as ``command.*`` events,
  keeps at most 1 MiB per stream in memory, and kills the whole group (SIGTERM, then SIGKILL)
  on timeout, cancellation or Ctrl-C;
- snapshots are full, independent copies (``cp -a --reflink=auto``), written aside and renamed
  into place with a completion marker, so a half-written snapshot is never used;
- machine and snapshot records live in provider storage, so ``from_id`` works from any process;
- ``rig ls`` shows a machine ``running`` while its directory exists and ``missing`` once it is
  gone; ``rig shell``/``rig exec`` run on the host in that directory (``$SHELL`` for a shell);
  there is nothing to stop or start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from providers.local.layout import PROVIDER_ID, machine_dir
from providers.local.status import LocalStatus

if TYPE_CHECKING:
    from providers.local.controller import LocalController
    from rigcli.provider_api import (
        EffectEntry,
        EffectJournal,
        ProviderPlugin,
        ProviderSetup,
        SupportsDirectAttach,
        SupportsDirectStatus,
    )


class LocalPlugin:
    """The plugin rig finds by the ``local`` entry point. Its module is light: a plan or ``rig ls``
    answered from rig's cache asks only ``status_directly``; the controller is made for a load."""

    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> LocalController:
        from providers.local.controller import LocalController  # a load's: machines, snapshots, storage

        return LocalController(setup)

    def attach_directly(
        self,
        config: Mapping[str, Any],
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        state_dir: str,
        effects: EffectJournal,
    ) -> int | None:
        """``rig shell``/``rig exec`` without a controller; None, having started nothing, when the
        machine's directory is gone (the engine then says so). The program runs on this host, as
        rig's child: nothing to journal."""
        path = machine_dir(state_dir, resource["id"]) if resource["kind"] == "machine" else None
        if path is None or not os.path.isdir(path):
            return None
        from providers.local.attach import attach_in  # provider_kit's host-program runner, for this path only

        return attach_in(state_dir, config, resource["id"], argv, env=env, cwd=None)

    def status_directly(self, config: Mapping[str, Any], *, state_dir: str) -> LocalStatus:
        """``rig plan``/``rig ls`` without a controller: snapshots and machines are directories under ``state_dir``."""
        return LocalStatus(state_dir)


plugin = LocalPlugin()

if TYPE_CHECKING:  # mypy checks the plugin against the contract and its optional hooks
    _plugin: ProviderPlugin = plugin
    _status: SupportsDirectStatus = plugin
    _attaches: SupportsDirectAttach = plugin

__all__ = ["LocalPlugin", "plugin"]
