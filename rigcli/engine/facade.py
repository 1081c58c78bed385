"""The Engine class: the core plus workspace/operation and cache-admin behaviour."""

from __future__ import annotations

from rigcli.engine.cache_admin import CacheMixin
from rigcli.engine.workspaces import WorkspaceMixin


class Engine(WorkspaceMixin, CacheMixin):
    """A loaded rig project. Create it with ``create_engine`` and ``await engine.load()``."""


__all__ = ["Engine"]
