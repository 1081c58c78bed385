"""ProjectEngine: the core plus workspace/operation and cache-admin behaviour, one class."""

from __future__ import annotations

from rigcli.engine.cache_admin import CacheMixin
from rigcli.engine.garbage import GarbageMixin
from rigcli.engine.workspaces import WorkspaceMixin


class ProjectEngine(WorkspaceMixin, CacheMixin, GarbageMixin):
    """A loaded rig project (implements ``rigcli.engine.api.Engine``); see ``create_engine``."""


__all__ = ["ProjectEngine"]
