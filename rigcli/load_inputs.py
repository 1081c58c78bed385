"""Files a config's load read besides its Python modules (a devcontainer.json, a Dockerfile, a tree whose
digest a task's cache key holds), noted while it loads so the project's memo stamps them too: a remembered
answer (``rig plan``, ``rig ls``, ``rig shell``: ``rigcli/cache/``) is used only while every one reads the same.
A directory noted stands for its entries: its stamp changes when one is added, removed or renamed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

_noted: list[str] | None = None


@contextlib.contextmanager
def noting() -> Iterator[list[str]]:
    """Collect what is noted while the block runs (a config's import); the list is filled as it goes."""
    global _noted
    previous, _noted = _noted, []
    try:
        yield _noted
    finally:
        _noted = previous


def note_inputs(paths: Iterable[str]) -> None:
    """Files (or directories) the load read, by absolute path; outside a load nothing listens."""
    if _noted is not None:
        _noted.extend(paths)


__all__ = ["note_inputs", "noting"]
