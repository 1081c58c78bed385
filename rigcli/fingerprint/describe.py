"""The walk from a handler to the project code and values it depends on, as one JSON value."""

from __future__ import annotations

import builtins
import os
import sys
from collections import deque
from types import FunctionType, ModuleType

from rigcli.fingerprint.codeinfo import PYTHON, code_info
from rigcli.fingerprint.import_statement import Import
from rigcli.fingerprint.project import Project
from rigcli.fingerprint.values import MISSING, ValueDescriber, plain_function, wrapped_of
from rigcli.jsonutil import JsonValue

# Module globals whose values depend on how the file was imported, not on what it says.
_IMPORT_DUNDERS = frozenset(
    {"__name__", "__spec__", "__loader__", "__package__", "__cached__", "__builtins__", "__path__"}
)
Namespace = dict[str, object]  # a module's globals


class Describer(ValueDescriber):
    """One description: the handler's value plus a table of the project definitions it reaches.

    Definitions (project functions, classes, whole modules) are numbered in the order they
    are first met and described once, breadth first; every other mention is ``{"t": "ref"}``.
    That makes cycles terminate and keeps long helper chains off the Python stack.
    """

    def __init__(self, project: Project) -> None:
        super().__init__(project)
        self._defs: list[JsonValue] = []
        self._numbers: dict[int, int] = {}
        self._keep: list[object] = []  # numbered objects stay alive so their ids stay unique
        self._pending: deque[tuple[int, object]] = deque()
        # Module globals seen during the walk, by module name: sys.modules may already hold a
        # newer import of the same name (rig_config.py and its helpers are re-imported per load).
        self._namespaces: dict[str, Namespace] = {}

    def describe(self, handler: object) -> JsonValue:
        root = self.value(handler, 0)
        while self._pending:
            number, obj = self._pending.popleft()
            self._defs[number] = self._definition(obj)
        return {"handler": root, "defs": self._defs}

    # -- hooks for ValueDescriber ----------------------------------------------------------

    def function_file(self, fn: FunctionType) -> str | None:
        relpath = self.project.relpath(fn.__code__.co_filename)
        if relpath is None and fn.__code__.co_filename.startswith("<"):
            # exec()'d inside a project module: no source, but still project code.
            relpath = self.project.relpath(fn.__globals__.get("__file__"))
        return relpath

    def class_file(self, cls: type) -> str | None:
        namespace = self._class_namespace(cls)
        return self.project.relpath(namespace.get("__file__")) if namespace is not None else None

    def reference(self, obj: object) -> JsonValue:
        number = self._numbers.get(id(obj))
        if number is None:
            number = self._numbers[id(obj)] = len(self._defs)
            self._keep.append(obj)
            self._defs.append(None)
            self._pending.append((number, obj))
        return {"t": "ref", "n": number}

    # -- definitions ---------------------------------------------------------------------------

    def _definition(self, obj: object) -> JsonValue:
        if isinstance(obj, FunctionType):
            return self._function_definition(obj)
        if isinstance(obj, type):
            return self._class_definition(obj)
        assert isinstance(obj, ModuleType)
        return self._module_definition(obj)

    def _function_definition(self, fn: FunctionType) -> JsonValue:
        code = fn.__code__
        namespace = fn.__globals__
        has_source = self.project.relpath(code.co_filename) is not None
        self._seen(namespace)
        info = code_info(code, code.co_filename if has_source else None)
        entry: dict[str, JsonValue] = {"kind": "function", "name": f"{self.function_file(fn)}:{_qualname(fn)}"}
        entry["code"] = info.digest
        if info.from_bytecode:
            entry["python"] = PYTHON
        if fn.__defaults__:
            entry["defaults"] = [self.value(v, 1) for v in fn.__defaults__]
        if fn.__kwdefaults__:
            entry["kwdefaults"] = {k: self.value(v, 1) for k, v in sorted(fn.__kwdefaults__.items())}
        if fn.__closure__:
            entry["closure"] = self._closure(fn)
        found: dict[str, JsonValue] = {}
        for chain in info.chains:
            key, desc = self._resolve(namespace, chain, builtins_too=True)
            found[key] = desc
        if found:
            entry["globals"] = found
        imports: dict[str, JsonValue] = {}
        for statement in info.imports:
            self._import(namespace, statement, imports)
        if imports:
            entry["imports"] = imports
        wrapped = wrapped_of(fn)
        if wrapped is not MISSING:
            entry["wrapped"] = self.value(wrapped, 1)
        return entry

    def _class_definition(self, cls: type) -> JsonValue:
        from rigcli.fingerprint.source import digest, find_classes, load_source  # parses: see codeinfo.py

        namespace = self._class_namespace(cls) or {}
        filename = namespace.get("__file__")
        entry: dict[str, JsonValue] = {"kind": "class", "name": f"{self.class_file(cls)}:{cls.__qualname__}"}
        source = load_source(filename) if isinstance(filename, str) else None
        nodes = find_classes(source, cls.__qualname__, getattr(cls, "__firstlineno__", None)) if source else []
        if source is None or not nodes:
            # Made by type() or the file changed since import: fall back to its members.
            entry["code"] = None
            entry["members"] = {k: self.value(v, 1) for k, v in sorted(vars(cls).items()) if not _is_dunder(k)}
            return entry
        entry["code"] = [digest(node) for node in nodes]
        found: dict[str, JsonValue] = {}
        for node in nodes:
            for chain in source.references(node)[0]:
                # Names the class body binds itself, or that are parameters, are not globals.
                if chain[0] in namespace:
                    key, desc = self._resolve(namespace, chain, builtins_too=False)
                    found[key] = desc
        if found:
            entry["globals"] = found
        # A class made inside a function: its methods' closures hold the factory's arguments.
        closures = {_qualname(f): self._closure(f) for f in _methods(cls) if f.__closure__}
        if closures:
            entry["closures"] = dict(sorted(closures.items()))
        return entry

    def _closure(self, fn: FunctionType) -> JsonValue:
        cells = zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True)
        return {name: self.cell(cell) for name, cell in cells}

    def _module_definition(self, module: ModuleType) -> JsonValue:
        from rigcli.fingerprint.source import load_source

        relpath = self.project.module_relpath(module)
        source = load_source(module.__file__) if module.__file__ else None
        entry: dict[str, JsonValue] = {"kind": "module", "name": relpath}
        entry["code"] = source.module_digest() if source is not None else None
        # The source covers what the module defines; follow what it takes from other project files.
        found: dict[str, JsonValue] = {}
        for name, value in sorted(vars(module).items()):
            if isinstance(value, ModuleType):
                other = self.project.module_relpath(value)
            elif isinstance(value, FunctionType):
                other = self.function_file(value)
            elif isinstance(value, type):
                other = self.class_file(value)
            else:
                continue
            if other is not None and other != relpath:
                found[name] = self.value(value, 1)
        if found:
            entry["globals"] = found
        return entry

    # -- name resolution -----------------------------------------------------------------------

    def _resolve(self, namespace: Namespace, chain: tuple[str, ...], *, builtins_too: bool) -> tuple[str, JsonValue]:
        root = chain[0]
        if root in _IMPORT_DUNDERS:
            return root, {"t": "import-dunder"}
        value = namespace.get(root, MISSING)
        if value is MISSING and builtins_too:
            table = namespace.get("__builtins__", builtins)
            names = vars(table) if isinstance(table, ModuleType) else table
            value = names.get(root, MISSING) if isinstance(names, dict) else MISSING
        if value is MISSING:
            return root, {"t": "missing"}
        used = 1
        while used < len(chain) and isinstance(value, ModuleType):
            if self.project.module_relpath(value) is None:
                # Attributes of installed modules are named, never read: reading sys.argv or
                # os.environ would tie the fingerprint to the running process.
                name = f"{value.__name__}:{'.'.join(chain[used:])}"
                return ".".join(chain), {"t": "external", "name": name}
            self._seen(vars(value))
            value = vars(value).get(chain[used], MISSING)
            used += 1
            if value is MISSING:
                return ".".join(chain[:used]), {"t": "missing"}
        return ".".join(chain[:used]), self.value(value, 1)

    def _import(self, namespace: Namespace, statement: Import, out: dict[str, JsonValue]) -> None:
        name = "." * statement.level + statement.module
        if statement.level:
            import importlib.util  # only a relative import in a handler gets here

            try:
                package = namespace.get("__package__")
                name = importlib.util.resolve_name(name, package if isinstance(package, str) and package else None)
            except (ImportError, ValueError):
                out[name] = {"t": "missing"}
                return
        module = sys.modules.get(name)
        if module is None:
            out[name] = self._unloaded(name)
        elif not statement.names:
            out[name] = self.value(module, 1)
        elif self.project.module_relpath(module) is None:
            for attr in statement.names:
                out[f"{name}.{attr}"] = {"t": "external", "name": f"{name}:{attr}"}
        else:
            for attr in statement.names:
                value = vars(module).get(attr, sys.modules.get(f"{name}.{attr}", MISSING))
                out[f"{name}.{attr}"] = {"t": "missing"} if value is MISSING else self.value(value, 1)

    def _unloaded(self, name: str) -> JsonValue:
        # Imported lazily inside the handler and not yet loaded: use the file it will load.
        from rigcli.fingerprint.source import load_source

        base = os.path.join(self.project.root, *name.split("."))
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            relpath = self.project.relpath(candidate)
            source = load_source(candidate) if relpath is not None else None
            if source is not None:
                return {"t": "file", "name": relpath, "code": source.module_digest()}
        return {"t": "module", "name": name}

    def _seen(self, namespace: Namespace) -> None:
        name = namespace.get("__name__")
        if isinstance(name, str):
            self._namespaces.setdefault(name, namespace)

    def _class_namespace(self, cls: type) -> Namespace | None:
        """The globals of the module that defined ``cls`` (its ``__file__`` says where)."""
        module = sys.modules.get(cls.__module__)
        candidates = [self._namespaces.get(cls.__module__), vars(module) if module is not None else None]
        if "<locals>" not in cls.__qualname__:
            for namespace in candidates:
                if namespace is not None and _defines(namespace, cls):
                    return namespace
        # Defined in a function, or bound under another name: a method knows its module
        # (generated ones, such as a dataclass __init__, come from "<string>" and may not).
        methods = [m for m in _methods(cls) if not m.__code__.co_filename.startswith("<")]
        if methods:
            return methods[0].__globals__
        return next((namespace for namespace in candidates if namespace is not None), None)


def _qualname(fn: FunctionType) -> str:
    # The code's own qualname: functools.wraps copies the wrapped function's onto the wrapper.
    qualname = getattr(fn.__code__, "co_qualname", None)  # 3.11+
    if qualname is None:
        qualname = fn.__code__.co_name if wrapped_of(fn) is not MISSING else fn.__qualname__
    return str(qualname)


def _methods(cls: type) -> list[FunctionType]:
    found = (plain_function(v) for v in vars(cls).values())
    return [f for f in found if f is not None]


def _defines(namespace: Namespace, cls: type) -> bool:
    value = namespace.get(cls.__qualname__.split(".")[0], MISSING)
    for part in cls.__qualname__.split(".")[1:]:
        value = getattr(value, part, MISSING) if isinstance(value, type) else MISSING
    return value is cls


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


__all__ = ["Describer"]
