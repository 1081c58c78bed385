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
  (``deferred.py:RARELY_USED``: ``dataclasses`` imports ``inspect`` only to write the docstring of a class
  that has none; ``pathlib`` imports ``urllib.parse`` only for ``as_uri``); a command that loads
  a project imports both this way first (``import_for_the_full_way``), and the PostgreSQL
  backend imports psycopg this way (``DRIVER_RARELY_USED``). A stand-in may carry a few real
  values its importer reads at once (``CHEAP``: ``installed_version`` for importlib.metadata).
  The tables of what is deferred, and why each, are ``deferred.py``;
- ``install_module`` / ``forget_module``: the config loader imports ``rig_config.py`` and the
  project's helper modules afresh on every load (an edited helper must be seen).

These are the only writes to ``sys.modules`` in rig (tests/test_architecture.py checks it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from types import ModuleType

from rigcli.speed.deferred import CHEAP, IN_PARTS, RARELY_USED

# Not typing.TYPE_CHECKING: the commands answered from the cache (rig ls, logs, shell) import this module and no typing;
# mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec


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
    ``values`` are names it reads at once and that cost nothing real to give (``CHEAP``).
    """

    def __init__(self, name: str, functions: Iterable[str] = (), values: Mapping[str, object] | None = None) -> None:
        super().__init__(name)
        for function in functions:
            setattr(self, function, _calling_later(name, function))
        self.__dict__.update(values or {})

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):  # the import system asking (a package's __path__)
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:  # read while standing in: import the real one
            del sys.modules[self.__name__]
        __import__(self.__name__)
        real = sys.modules[self.__name__]
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


class _PackageInParts(_ImportedOnFirstUse):
    """Stands in for a package whose importer reads a few names, each defined in one of its
    submodules (``parts``, ``IN_PARTS``): reading one loads that submodule alone (with what it
    imports), this stand-in as its package. Any other name imports the whole package. Once that
    happens, ``_SetsLoadedParts`` gives the real package the submodules loaded before it, so
    ``asyncio.CancelledError`` is the very class psycopg took and ``asyncio.tasks`` is there."""

    def __init__(self, name: str, functions: Iterable[str], parts: Mapping[str, str], path: list[str]) -> None:
        super().__init__(name, functions)
        self.__path__ = path
        self._rig_parts = parts
        self._rig_loading = 0

    def __getattr__(self, name: str) -> object:
        if self._rig_loading or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)  # the import system asking whether a submodule is loaded yet
        part = self._rig_parts.get(name)
        if part is not None and sys.modules.get(self.__name__) is self:
            _SetsLoadedParts.once(self.__name__)
            self._rig_loading += 1
            try:
                __import__(f"{self.__name__}.{part}")
            except ImportError:  # laid out otherwise (another Python): the whole package, below
                pass
            finally:
                self._rig_loading -= 1
            value = getattr(sys.modules.get(f"{self.__name__}.{part}"), name, _MISSING)
            if value is not _MISSING:
                setattr(self, name, value)
                return value
        return super().__getattr__(name)


_MISSING = object()


class _SetsLoadedParts:
    """A ``sys.meta_path`` finder for one package, there until that package is imported: the
    import system sets a submodule on its package only when it loads the submodule itself, so
    when the real package runs, this sets those loaded earlier under a ``_PackageInParts``."""

    def __init__(self, package: str) -> None:
        self.package = package

    @classmethod
    def once(cls, package: str) -> None:
        if not any(isinstance(finder, cls) and finder.package == package for finder in sys.meta_path):
            sys.meta_path.insert(0, cls(package))

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name != self.package:
            return None
        sys.meta_path.remove(self)
        spec = _find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenSetsParts(spec.loader, name)  # type: ignore[assignment]  # a Loader by its methods
        return spec


class _ThenSetsParts:
    """The real package's loader, its submodules already loaded set on it first (and itself put back)."""

    def __init__(self, loader: Loader, package: str) -> None:
        self.loader = loader
        self.package = package

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        # Before it runs: its own code reads them (asyncio's __init__ sums ``coroutines.__all__`` …).
        prefix = self.package + "."
        for name, loaded in list(sys.modules.items()):
            child = name[len(prefix) :]
            if name.startswith(prefix) and loaded is not None and "." not in child:
                setattr(module, child, loaded)
        self.loader.exec_module(module)


def _find_spec(name: str) -> ModuleSpec | None:
    """What ``import name`` would find (the meta path's finders in turn), without importing it."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec: ModuleSpec | None = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def _stand_in(name: str, functions: Iterable[str]) -> ModuleType:
    parts = IN_PARTS.get(name)
    spec = _find_spec(name) if parts else None
    path = getattr(spec, "submodule_search_locations", None)
    if parts and path:
        return _PackageInParts(name, functions, parts, list(path))
    return _ImportedOnFirstUse(name, functions, CHEAP.get(name))


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
        __import__(module)  # marked absent (None): the ImportError an import gives
        return sys.modules[module]
    standing = [name for name in deferred if name not in sys.modules]
    for name in standing:
        sys.modules[name] = _stand_in(name, deferred[name])
    for name in standing:
        _bind_to_parent(name)
    try:
        __import__(module)
        return sys.modules[module]
    finally:
        for name in standing:
            if isinstance(sys.modules.get(name), _ImportedOnFirstUse):
                del sys.modules[name]


def _bind_to_parent(name: str) -> None:
    """``import a.b`` then ``a.b.f()`` reads ``b`` off ``a``: the import system sets that attribute only
    when it loads ``a.b`` itself, so a stand-in for ``a.b`` is set there by hand (where ``a`` is loaded,
    or stands in too). It stays: read later, it imports the real ``a.b``, which takes its place."""
    parent, _, child = name.rpartition(".")
    holder = sys.modules.get(parent)
    if holder is not None and child not in holder.__dict__:
        setattr(holder, child, sys.modules[name])


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
    "forget_module",
    "import_deferring",
    "import_for_the_full_way",
    "import_hiding",
    "install_module",
    "lazy_attribute",
    "mark_absent",
]
