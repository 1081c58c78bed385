"""Import cost paid only where it buys something: lazy package attributes, and every write to ``sys.modules``.

rig imports lazily (inside the functions that need a module) so ``rig --version`` and a cached
plan never load Typer, Rich, pydantic, asyncio or the drivers. Four techniques need more than a
local import, and they live here:

- ``lazy_attribute``: a package's public names (``from rigcli import workflow``) resolved on
  first use, so importing the package costs nothing for what a command does not use;
- ``import_hiding`` / ``mark_absent``: a library's optional import that rig never uses is made
  to fail while that library loads (httpx's command-line client pulls in Rich, Click and
  Pygments; httpcore imports trio when installed), then the name is importable again where that
  matters (a handler may use trio);
- ``import_deferring``: a module is imported with some of *its* imports left for first use —
  ``dataclasses`` imports ``inspect`` (with ``dis``, ``linecache`` and ``importlib.machinery``)
  only to write the docstring of a class that has none, and ``copy`` only for ``asdict``; a
  cached plan of 200 tasks needs neither and paid ~20M instructions (~6 %) for both;
- ``install_module`` / ``forget_module``: the config loader imports ``rig_config.py`` and the
  project's helper modules afresh on every load (an edited helper must be seen).

These are the only writes to ``sys.modules`` in rig (tests/test_architecture.py checks it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping, MutableMapping
from types import ModuleType


def lazy_attribute(package: str, name: str, table: Mapping[str, str], namespace: MutableMapping[str, object]) -> object:
    """``package``'s attribute ``name``, imported from the module ``table[name]`` and kept in
    ``namespace`` (the package's globals) so the next access is a plain lookup. For a ``__getattr__``."""
    module_name = table.get(name)
    if module_name is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    namespace[name] = value
    return value


def mark_absent(name: str) -> None:
    """``import name`` fails from now on (unless it is loaded already): an optional import rig never needs."""
    sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def import_hiding(module: str, hidden: Iterable[str]) -> ModuleType:
    """Import ``module`` with the ``hidden`` modules unimportable during that import only.

    Names already loaded are left alone (hiding them would break whoever loaded them); if
    ``module`` is loaded already, nothing is hidden and it is returned as it is.
    """
    if module in sys.modules:
        return sys.modules[module]
    hiding = [name for name in hidden if name not in sys.modules]
    for name in hiding:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        return importlib.import_module(module)
    finally:
        for name in hiding:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


class _ImportedOnFirstUse(ModuleType):
    """Stands in for a module until one of its attributes is read; then imports it and takes its names."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:  # read while standing in: import the real one
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


def import_deferring(module: str, deferred: Iterable[str]) -> ModuleType:
    """Import ``module`` with each of the ``deferred`` modules it imports bound to a stand-in that
    imports the real one when first used.

    The stand-ins are in ``sys.modules`` only during that import: anyone importing a deferred
    module later gets the real one. Names already loaded are used as they are; if ``module`` is
    loaded already, nothing is deferred and it is returned as it is.
    """
    if module in sys.modules:
        return sys.modules[module]
    standing = [name for name in deferred if name not in sys.modules]
    for name in standing:
        sys.modules[name] = _ImportedOnFirstUse(name)
    try:
        return importlib.import_module(module)
    finally:
        for name in standing:
            if isinstance(sys.modules.get(name), _ImportedOnFirstUse):
                del sys.modules[name]


def install_module(name: str, module: ModuleType) -> None:
    """Register ``module`` under ``name`` before executing it (what an import does for its own modules)."""
    sys.modules[name] = module


def forget_module(name: str) -> None:
    """Drop ``name`` from the import cache: the next import reads its file again."""
    sys.modules.pop(name, None)


__all__ = ["forget_module", "import_deferring", "import_hiding", "install_module", "lazy_attribute", "mark_absent"]
