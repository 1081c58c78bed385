"""rig: provision dev machines from a cached workflow of setup tasks.

This module is what ``rig_config.py`` imports. Names load lazily so ``rig --version`` and
cached ``rig plan`` stay fast.
"""

from __future__ import annotations

from rigcli._version import __version__

# Not typing.TYPE_CHECKING: importing typing is most of what `rig --version` would cost rig itself
# (rigcli/speed/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rigcli.authoring.capabilities import define_host_capability
    from rigcli.authoring.inputs import Arg, WorkspaceRef
    from rigcli.authoring.nodes import task
    from rigcli.authoring.project import define_config, sequence, workflow
    from rigcli.authoring.values import define_provider, env, secret
    from rigcli.engine import create_engine
    from rigcli.errors import RigError
    from rigcli.state import create_state_store

_LAZY = {
    "workflow": "rigcli.authoring.project",
    "sequence": "rigcli.authoring.project",
    "task": "rigcli.authoring.nodes",
    "define_config": "rigcli.authoring.project",
    "define_provider": "rigcli.authoring.values",
    "define_host_capability": "rigcli.authoring.capabilities",
    "env": "rigcli.authoring.values",
    "secret": "rigcli.authoring.values",
    "Arg": "rigcli.authoring.inputs",
    "WorkspaceRef": "rigcli.authoring.inputs",
    "create_engine": "rigcli.engine",
    "create_state_store": "rigcli.state",
    "RigError": "rigcli.errors",
}


def __getattr__(name: str) -> object:
    from rigcli.speed.imports import lazy_attribute

    return lazy_attribute(__name__, name, _LAZY, globals())


__all__ = [
    "Arg",
    "RigError",
    "WorkspaceRef",
    "__version__",
    "create_engine",
    "create_state_store",
    "define_config",
    "define_host_capability",
    "define_provider",
    "env",
    "secret",
    "sequence",
    "task",
    "workflow",
]
