"""The ``swarm`` provider: machines are Docker Swarm services of one replica, snapshots are images in a registry.

It runs on an existing cluster rather than scheduling anything itself: the manager places each
machine's task on a node that fits its constraints and reservations, and every node pulls what it
runs from the configured registry (and from nothing else). A task's container lives on its node,
so exec, files and commits go to that node's own Docker endpoint (``nodes=``). It reuses the docker
provider's client (unix, tcp+TLS, ssh), its exec and file code, and its labels.

Config: the manager as for ``docker`` (``host``, ``tls_verify``, ``cert_path``, defaulting to
DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH), ``registry`` (required), ``nodes``,
``constraints``, ``resources`` (compose's shape), ``networks``, ``image``, ``workdir``, ``env``,
``start_timeout`` and ``schedule_timeout``. The cluster's id and the registry are the provider's
identity (another cluster makes tasks ``provider-changed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from providers.swarm.controller import SwarmController
from providers.swarm.diagnose import diagnose
from providers.swarm.runtime import PROVIDER_ID, SwarmMachine, SwarmRuntime, snapshot_of
from rigcli.provider_api import ProviderDiagnosis, ProviderPlugin, ProviderSetup, SupportsDiagnosis


class SwarmPlugin:
    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> SwarmController:
        return SwarmController(setup)

    def diagnose(self, config: Mapping[str, Any]) -> ProviderDiagnosis:
        """For ``rig doctor``: the manager, the cluster's nodes (and which ones rig can reach), the registry."""
        return diagnose(config)


plugin = SwarmPlugin()

if TYPE_CHECKING:  # mypy checks the plugin against the contract and its optional hook
    _plugin: ProviderPlugin = plugin
    _diagnoses: SupportsDiagnosis = plugin

__all__ = ["SwarmController", "SwarmMachine", "SwarmPlugin", "SwarmRuntime", "plugin", "snapshot_of"]
