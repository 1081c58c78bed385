"""An import statement a function body holds, as fingerprinting records it (no ``ast`` needed to read one)."""

from __future__ import annotations

from rigcli.speed.records import lazy_dataclass


@lazy_dataclass(frozen=True)
class Import:
    """An import statement inside a function body: ``from <module> import <names>``."""

    module: str
    level: int
    names: tuple[str, ...]  # empty for a plain ``import module``


__all__ = ["Import"]
