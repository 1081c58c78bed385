"""The engine room: plan, apply, fork and operations; talks outward only through events,
the state store, provider controllers and the host (``local``) interface."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcli.engine.cache_admin import CacheMixin
from rigcli.engine.workspaces import WorkspaceMixin


class Engine(WorkspaceMixin, CacheMixin):
    """A loaded rig project. Create it with ``create_engine`` and ``await engine.load()``."""


def create_engine(project_dir: str | Path, **options: Any) -> Engine:
    """An engine for the project in ``project_dir``; see Engine for the keyword options."""
    return Engine(project_dir, **options)


__all__ = ["Engine", "create_engine"]
