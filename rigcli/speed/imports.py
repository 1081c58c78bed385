"""Import cost paid only where it buys something: lazy package attributes, and every write to ``sys.modules``.

rig imports lazily (inside the functions that need a module) so ``rig --version`` and a cached
plan never load Typer, Rich, pydantic, asyncio or the drivers. Three techniques need more than a
local import, and they live here:

- ``lazy_attribute``: a package's public names (``from rigcli import workflow``) resolved on
  first use, so importing the package costs nothing for what a command does not use;
- ``import_hiding`` / ``mark_absent``: a library's optional import that rig never uses is made
  to fail while that library loads (httpx's command-line client pulls in Rich, Click and
  Pygments; httpcore imports trio when installed), then the name is importable again where that
  matters (a handler may use trio);
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


def install_module(name: str, module: ModuleType) -> None:
    """Register ``module`` under ``name`` before executing it (what an import does for its own modules)."""
    sys.modules[name] = module


def forget_module(name: str) -> None:
    """Drop ``name`` from the import cache: the next import reads its file again."""
    sys.modules.pop(name, None)


__all__ = ["forget_module", "import_hiding", "install_module", "lazy_attribute", "mark_absent"]
