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
- ``import_deferring``: a module is imported with some of *its* imports left for first use
  (``RARELY_USED``: ``dataclasses`` imports ``inspect`` only to write the docstring of a class
  that has none; ``pathlib`` imports ``urllib.parse`` only for ``as_uri``); a command that loads
  a project imports both this way first (``import_for_the_full_way``);
- ``install_module`` / ``forget_module``: the config loader imports ``rig_config.py`` and the
  project's helper modules afresh on every load (an edited helper must be seen).

These are the only writes to ``sys.modules`` in rig (tests/test_architecture.py checks it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from types import ModuleType


def lazy_attribute(package: str, name: str, table: Mapping[str, str], namespace: MutableMapping[str, object]) -> object:
    """``package``'s attribute ``name``, imported from the module ``table[name]`` and kept in
    ``namespace`` (the package's globals) so the next access is a plain lookup. For a ``__getattr__``."""
    module_name = table.get(name)
    if module_name is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    __import__(module_name)  # not importlib.import_module: the same for an absolute name, without importlib
    value = getattr(sys.modules[module_name], name)
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
        __import__(module)
        return sys.modules[module]
    finally:
        for name in hiding:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


class _ImportedOnFirstUse(ModuleType):
    """Stands in for a module until one of its attributes is read; then imports it and takes its names.

    ``functions`` are names the importing module takes with ``from ... import`` (which reads them
    at once): each is bound to a function that imports the real module when it is first called.
    """

    def __init__(self, name: str, functions: Iterable[str] = ()) -> None:
        super().__init__(name)
        for function in functions:
            setattr(self, function, _calling_later(name, function))

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):  # the import system asking (a package's __path__)
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:  # read while standing in: import the real one
            del sys.modules[self.__name__]
        __import__(self.__name__)
        real = sys.modules[self.__name__]
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


def _calling_later(module: str, name: str) -> Callable[..., object]:
    def call(*args: object, **kwargs: object) -> object:
        __import__(module)
        function: Callable[..., object] = getattr(sys.modules[module], name)
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def import_deferring(module: str, deferred: Mapping[str, Iterable[str]]) -> ModuleType:
    """Import ``module`` with each of the ``deferred`` modules it imports bound to a stand-in that
    imports the real one when first used (the functions listed with it: when first called).

    The stand-ins are in ``sys.modules`` only during that import: anyone importing a deferred
    module later gets the real one. Names already loaded are used as they are; if ``module`` is
    loaded already, nothing is deferred and it is returned as it is.
    """
    if module in sys.modules:
        return sys.modules[module]
    standing = [name for name in deferred if name not in sys.modules]
    for name in standing:
        sys.modules[name] = _ImportedOnFirstUse(name, deferred[name])
    try:
        __import__(module)
        return sys.modules[module]
    finally:
        for name in standing:
            if isinstance(sys.modules.get(name), _ImportedOnFirstUse):
                del sys.modules[name]


# What a module imports only for a rare branch (measured on a cached plan of 200 tasks, speed/__init__.py):
# dataclasses: inspect (to write the docstring of a class without one; ~17M instructions with dis,
# linecache, importlib.machinery) and copy (asdict); pathlib: ntpath (PureWindowsPath) and
# urllib.parse with ipaddress (Path.as_uri; ~12M).
RARELY_USED: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "dataclasses": {"inspect": (), "copy": ()},
    "pathlib": {"ntpath": (), "urllib.parse": ("quote_from_bytes",)},
}


def import_for_the_full_way() -> None:
    """Import what any command that loads a project uses (records, paths), each without what it
    imports only for a rare branch (``RARELY_USED``); before anything else imports them."""
    for module, deferred in RARELY_USED.items():
        import_deferring(module, deferred)


def install_module(name: str, module: ModuleType) -> None:
    """Register ``module`` under ``name`` before executing it (what an import does for its own modules)."""
    sys.modules[name] = module


def forget_module(name: str) -> None:
    """Drop ``name`` from the import cache: the next import reads its file again."""
    sys.modules.pop(name, None)


__all__ = [
    "RARELY_USED",
    "forget_module",
    "import_deferring",
    "import_for_the_full_way",
    "import_hiding",
    "install_module",
    "lazy_attribute",
    "mark_absent",
]
