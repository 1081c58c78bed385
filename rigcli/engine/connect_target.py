"""What a connect command reaches (``rig ssh-proxy``/``forward``/``cp``): a workspace's running machine and
the controller (or the plugin's direct primitives) that serves it. A plain record: the lean path builds
one without the engine."""

from __future__ import annotations

from rigcli.speed.records import lazy_dataclass

# Not typing.TYPE_CHECKING: the lean connect path imports no typing of its own; mypy treats any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rigcli.provider_api import EffectEntry


@lazy_dataclass(frozen=True)
class ConnectTarget:
    """A workspace's machine, ready to be reached: what ``Connections.target`` (or the lean path) answers."""

    workspace: str
    workflow: str
    provider_id: str
    resource: EffectEntry
    controller: object  # offers the primitives asked for (provider_kit/connect.py)
    started: bool  # it was stopped, and was started for this
    ports: tuple[Mapping[str, object], ...]  # what its workspace(ports=...) declares


__all__ = ["ConnectTarget"]
