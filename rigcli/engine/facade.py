"""ProjectEngine: the core plus workspaces, operations, cache admin and garbage collection, one class."""

from __future__ import annotations

from rigcli.engine.cache_admin import CacheMixin
from rigcli.engine.garbage import GarbageMixin
from rigcli.engine.operations import OperationsMixin


class ProjectEngine(OperationsMixin, CacheMixin, GarbageMixin):
    """A loaded rig project (implements ``rigcli.engine.api.Engine``); see ``create_engine``."""


__all__ = ["ProjectEngine"]
