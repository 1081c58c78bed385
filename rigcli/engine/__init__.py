"""The engine room: plan, apply, fork and operations; talks outward only through events,
the state store, provider controllers and the host (``local``) interface.

Names load lazily: importing ``rigcli.engine.results`` must not pull in asyncio and the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rigcli.engine.facade import Engine


def create_engine(project_dir: str | Path, **options: Any) -> Engine:
    """An engine for the project in ``project_dir``; see EngineCore for the keyword options."""
    from rigcli.engine.facade import Engine

    return Engine(project_dir, **options)


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from rigcli.engine.facade import Engine

        return Engine
    raise AttributeError(f"module 'rigcli.engine' has no attribute {name!r}")


__all__ = ["Engine", "create_engine"]
