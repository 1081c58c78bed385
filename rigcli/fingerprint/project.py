"""Which files belong to the project, and how to name them without the project's location."""

from __future__ import annotations

import os
import re
import site
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType

PROJECT_MARK = "<project>"
# Components that mark installed code even when it sits inside the project (a .venv).
_INSTALLED_DIRS = frozenset({"site-packages", "dist-packages"})


@lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - some embedded interpreters lack these
        pass
    return tuple(sorted(os.path.realpath(r) for r in roots if r))


class Project:
    """The project directory, resolved once; answers "is this file ours, and under what name?"."""

    def __init__(self, project_dir: str | Path) -> None:
        given = os.path.abspath(os.fspath(project_dir))
        self.root = os.path.realpath(given)
        # Both spellings are scrubbed from values: __file__ keeps whichever one was imported.
        prefixes = sorted({self.root, given}, key=len, reverse=True)
        # The lookahead keeps /work/app from matching inside /work/app-old.
        self._pattern = re.compile("(?:" + "|".join(map(re.escape, prefixes)) + r")(?![\w.-])")
        self._excluded = tuple(r for r in _installed_roots() if _is_below(r, self.root) and r != self.root)

    def relpath(self, filename: object) -> str | None:
        """``filename`` relative to the project (with ``/``), or None when it is not project code.

        Anything but a non-empty string (a module's ``__file__`` may be None or missing) is not.
        """
        if not isinstance(filename, str) or not filename:
            return None
        return _relpath(self.root, self._excluded, filename)

    def module_relpath(self, module: ModuleType) -> str | None:
        return self.relpath(getattr(module, "__file__", None))

    def scrub(self, text: str) -> str:
        """Replace the project's absolute location inside ``text`` with ``<project>``."""
        if self.root == os.sep or os.sep not in text:
            return text
        return self._pattern.sub(PROJECT_MARK, text)


@lru_cache(maxsize=4096)
def _relpath(root: str, excluded: tuple[str, ...], filename: str) -> str | None:
    if filename.startswith("<"):  # <string>, <stdin>, <frozen ...>
        return None
    real = os.path.realpath(filename)
    if not _is_below(real, root) or any(_is_below(real, e) for e in excluded):
        return None
    relative = Path(os.path.relpath(real, root))
    if _INSTALLED_DIRS & set(relative.parts):
        return None
    return relative.as_posix()


def _is_below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


__all__ = ["PROJECT_MARK", "Project"]
