"""The ``docker`` provider: machines are containers, snapshots are committed images.

It talks to the Docker Engine API directly — with httpx for commands and files in machines,
snapshots and effects, on connections of its own (``rawhttp``) for the plan's check, making a
container (a fork's create and start), live status and exec — over a unix socket, tcp with
mutual TLS, or ssh (``endpoint``, ``ssh``), negotiating the API version down to what the daemon
speaks (1.41 works). It never pulls an image (a missing one is an error that says which
``docker pull`` to run) and never changes host networking: containers get NetworkMode "none"
unless the provider config names another network.

Config: ``image`` (default image for ``create_machine``), ``network`` (default "none"),
``workdir`` (default "/workspace"), ``env`` (a mapping added to every exec), and where the
daemon is: ``host``, ``tls_verify``, ``cert_path``, defaulting to DOCKER_HOST,
DOCKER_TLS_VERIFY and DOCKER_CERT_PATH like the docker CLI. The resolved host is part of the
provider fingerprint (through ``checks``); certificates and keys never are.

After fork: ``rig ls`` shows each container's state (``lifecycle.probe``, one request for all),
``rig stop``/``rig start`` stop and start it, and ``rig shell``/``rig exec`` attach an exec to
rig's terminal or streams (``attach``), over the same endpoint. The probe and the attach speak on
the controller's own kept-alive connection (``raw``, ``rawhttp``), never through httpx: ``rig
exec`` creates its exec on the connection its probe opened, and neither imports httpx.

This package's own import is light (the plugin, and its names on first use): rig finds the
plugin through its entry point on every command that may use it, and ``rig shell``/``rig exec`` in a
plain case asks only ``attach_directly`` (``direct``), which needs neither the controller nor httpx;
``rig ls`` answered from the cache asks ``status_directly`` (``direct_status``) likewise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from providers.docker.labels import PROVIDER_ID
from rigcli.speed.imports import lazy_attribute

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from providers.docker.controller import KEEPALIVE, DockerController
    from providers.docker.daemon_check import missing_image_hint
    from providers.docker.images import IMAGE_KIND, image_id_of
    from providers.docker.machine import DockerMachine, DockerRuntime
    from providers.docker.primitives import ContainerPrimitives
    from rigcli.provider_api import (
        DirectStatus,
        EffectEntry,
        EffectJournal,
        ProviderDiagnosis,
        ProviderPlugin,
        ProviderSetup,
        SupportsDiagnosis,
        SupportsDirectAttach,
        SupportsDirectConnect,
        SupportsDirectStatus,
        SupportsIdentity,
    )

_LAZY = {
    "IMAGE_KIND": "providers.docker.images",
    "image_id_of": "providers.docker.images",
    "KEEPALIVE": "providers.docker.controller",
    "DockerController": "providers.docker.controller",
    "missing_image_hint": "providers.docker.daemon_check",
    "DockerMachine": "providers.docker.machine",
    "DockerRuntime": "providers.docker.machine",
}


_WHERE_THE_DAEMON_IS = ("host", "tls_verify", "cert_path")


def __getattr__(name: str) -> object:
    return lazy_attribute(__name__, name, _LAZY, globals())


class DockerPlugin:
    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> DockerController:
        from providers.docker.controller import DockerController

        return DockerController(setup)

    def identity_config(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """What of the config says what the snapshots are (``SupportsIdentity``): with a registry, they are
        wherever it is, so not where the daemon is (``host``) nor the TLS material that reaches it."""
        if not config.get("registry"):
            return config
        return {key: value for key, value in config.items() if key not in _WHERE_THE_DAEMON_IS}

    def diagnose(self, config: Mapping[str, Any]) -> ProviderDiagnosis:
        """For ``rig doctor``: the endpoint this config resolves to, how it is reached, the server's version."""
        from providers.docker.diagnose import diagnose

        return diagnose(config)

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
        """``rig shell``/``rig exec`` without a controller (``direct``); None when the ordinary way must answer."""
        from providers.docker.direct import attach_directly

        return attach_directly(config, resource, argv, tty=tty, env=env, effects=effects)

    def connect_directly(
        self, config: Mapping[str, Any], resource: EffectEntry, *, state_dir: str
    ) -> ContainerPrimitives | None:
        """``rig ssh-proxy``/``cp``/``forward`` without a controller (``primitives``); None when the ordinary
        way must answer (the container does not run, another daemon's, ...)."""
        from providers.docker.primitives import connect_directly

        return connect_directly(config, resource)

    def status_directly(self, config: Mapping[str, Any], *, state_dir: str) -> DirectStatus | None:
        """``rig ls`` without a controller (``direct_status``; the daemon keeps everything, so no
        ``state_dir``); None when the ordinary way must answer."""
        from providers.docker.direct_status import status_directly

        return status_directly(config)  # the daemon keeps everything: no state_dir


plugin = DockerPlugin()

if TYPE_CHECKING:  # mypy checks the plugin against the contract and its optional hooks
    _plugin: ProviderPlugin = plugin
    _diagnoses: SupportsDiagnosis = plugin
    _attaches: SupportsDirectAttach = plugin
    _connects: SupportsDirectConnect = plugin
    _lists: SupportsDirectStatus = plugin
    _identifies: SupportsIdentity = plugin

__all__ = [
    "IMAGE_KIND",
    "KEEPALIVE",
    "PROVIDER_ID",
    "DockerController",
    "DockerMachine",
    "DockerPlugin",
    "DockerRuntime",
    "image_id_of",
    "missing_image_hint",
    "plugin",
]
