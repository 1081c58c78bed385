"""Stable JSON descriptions of Python values: data inline, project definitions by reference."""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import os
import re
from types import BuiltinFunctionType, CellType, FunctionType, MethodType, ModuleType
from typing import Final

from rigcli.fingerprint.project import Project
from rigcli.jsonutil import JsonValue, canonical_json

MISSING: Final = object()  # "no such attribute/global", distinct from a real None
# Addresses in default reprs ("<X object at 0x7f...>") have 8+ hex digits; shorter ones are values.
_ADDRESS = r"0x[0-9a-fA-F]{8,}"  # compiled on first use, by re's own cache
_MAX_DEPTH = 24
_BIG_INT = 1 << 256
# os.environ's repr is the whole environment: process state (and secrets), not a value.
_PROCESS_STATE_TYPES = (type(os.environ),)


class ValueDescriber:
    """Describes values; subclasses decide what is project code and how to reference it."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._active: set[int] = set()  # containers being described, to cut cycles

    def function_file(self, fn: FunctionType) -> str | None:
        raise NotImplementedError

    def class_file(self, cls: type) -> str | None:
        raise NotImplementedError

    def reference(self, obj: object) -> JsonValue:
        raise NotImplementedError

    def value(self, obj: object, depth: int) -> JsonValue:
        # Exact types: subclasses (str enums, secrets, int flags) are described as objects.
        if obj is None or type(obj) is bool:
            return obj
        if type(obj) is str:
            return self.project.scrub(obj)
        if type(obj) is int:
            return obj if -_BIG_INT < obj < _BIG_INT else {"t": "int", "hex": hex(obj)}
        if type(obj) is float:
            return obj if math.isfinite(obj) else {"t": "float", "repr": repr(obj)}
        if isinstance(obj, FunctionType):
            return self._function(obj)
        if isinstance(obj, type):
            return self.reference(obj) if self.class_file(obj) is not None else _external(obj)
        if isinstance(obj, ModuleType):
            if self.project.module_relpath(obj) is not None:
                return self.reference(obj)
            return {"t": "module", "name": obj.__name__}
        if depth > _MAX_DEPTH:
            return {"t": "deep", "type": qualified_name(type(obj))}
        if id(obj) in self._active:
            return {"t": "cycle"}
        self._active.add(id(obj))
        try:
            return self._compound(obj, depth + 1)
        finally:
            self._active.discard(id(obj))

    def cell(self, cell: CellType) -> JsonValue:
        try:
            contents = cell.cell_contents
        except ValueError:  # a closure variable not assigned yet
            return {"t": "empty-cell"}
        return self.value(contents, 1)

    def _function(self, fn: FunctionType) -> JsonValue:
        if self.function_file(fn) is not None:
            return self.reference(fn)
        desc = _external(fn)
        wrapped = wrapped_of(fn)
        if wrapped is not MISSING:  # an installed decorator around project code
            desc["wrapped"] = self.value(wrapped, 1)
        return desc

    def _compound(self, obj: object, depth: int) -> JsonValue:
        # isinstance narrows; the exact ``kind`` keeps subclasses (named tuples, ...) for _object.
        kind = type(obj)
        if isinstance(obj, (list, tuple)) and kind in (list, tuple):
            return {"t": kind.__name__, "items": [self.value(v, depth) for v in obj]}
        if isinstance(obj, dict) and kind is dict:
            # Sorted: insertion order may come from set iteration, which varies per process.
            pairs: list[JsonValue] = [[self.value(k, depth), self.value(v, depth)] for k, v in obj.items()]
            return {"t": "dict", "items": sorted(pairs, key=canonical_json)}
        if isinstance(obj, (set, frozenset)) and kind in (set, frozenset):
            return {"t": kind.__name__, "items": sorted((self.value(v, depth) for v in obj), key=canonical_json)}
        if isinstance(obj, (bytes, bytearray)) and kind in (bytes, bytearray):
            return {"t": kind.__name__, "hex": obj.hex()}
        if isinstance(obj, MethodType):
            return {"t": "method", "func": self.value(obj.__func__, depth), "self": self.value(obj.__self__, depth)}
        if isinstance(obj, BuiltinFunctionType):
            owner = obj.__self__
            if owner is None or isinstance(owner, ModuleType):
                return _external(obj)
            return {"t": "builtin-method", "name": obj.__qualname__, "self": self.value(owner, depth)}
        if isinstance(obj, functools.partial):
            return {
                "t": "partial",
                "func": self.value(obj.func, depth),
                "args": [self.value(v, depth) for v in obj.args],
                "keywords": {k: self.value(v, depth) for k, v in sorted(obj.keywords.items())},
            }
        if isinstance(obj, (staticmethod, classmethod)):
            return {"t": kind.__name__, "func": self.value(obj.__func__, depth)}
        return self._object(obj, depth)

    def _object(self, obj: object, depth: int) -> JsonValue:
        kind = type(obj)
        desc: dict[str, JsonValue] = {"t": "object", "type": self.value(kind, depth)}
        if isinstance(obj, enum.Enum):
            desc["name"] = obj.name
        elif dataclasses.is_dataclass(obj):
            fields = ((f.name, getattr(obj, f.name, None)) for f in dataclasses.fields(obj))
            desc["fields"] = {name: self.value(v, depth) for name, v in fields}
        elif isinstance(obj, tuple) and hasattr(kind, "_fields"):  # a named tuple
            desc["fields"] = {name: self.value(v, depth) for name, v in zip(kind._fields, obj, strict=True)}
        elif self.class_file(kind) is not None:
            desc["state"] = {k: self.value(v, depth) for k, v in sorted(_state(obj).items())}
        else:
            text = _stable_repr(obj)
            if text is not None:
                desc["repr"] = self.project.scrub(text)
        wrapped = wrapped_of(obj)
        if wrapped is not MISSING:
            desc["wrapped"] = self.value(wrapped, depth)
        return desc


def _state(obj: object) -> dict[str, object]:
    state = dict(getattr(obj, "__dict__", {}))
    for klass in type(obj).__mro__:
        slots = vars(klass).get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                state[name] = getattr(obj, name)
    return state


def _stable_repr(obj: object) -> str | None:
    """``repr(obj)`` when it shows a value; None when it shows an address or process state."""
    if isinstance(obj, _PROCESS_STATE_TYPES):
        return None
    try:
        text = repr(obj)
    except Exception:  # a broken __repr__ must not break fingerprinting
        return None
    return None if re.search(_ADDRESS, text) else text


def wrapped_of(obj: object) -> object:
    """``obj.__wrapped__`` as set by functools.wraps, read without running any __getattr__."""
    namespace = getattr(obj, "__dict__", None)
    return namespace.get("__wrapped__", MISSING) if isinstance(namespace, dict) else MISSING


def plain_function(member: object) -> FunctionType | None:
    """The function behind a class member (plain, static or class method), else None."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    return member if isinstance(member, FunctionType) else None


def qualified_name(obj: object) -> str:
    """``module:qualname`` of a function, class or builtin."""
    module = getattr(obj, "__module__", None) or "builtins"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    return f"{module}:{name}"


def _external(obj: object) -> dict[str, JsonValue]:
    return {"t": "external", "name": qualified_name(obj)}


__all__ = ["MISSING", "ValueDescriber", "plain_function", "qualified_name", "wrapped_of"]
