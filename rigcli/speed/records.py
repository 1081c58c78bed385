"""Dataclasses whose methods are generated when the class is first used, not when it is defined.

``@dataclass`` compiles up to six methods per class with ``exec`` at import time (~0.5–1 ms each
class here); rig defines ~100 of them and a cached ``rig plan`` instantiates about 25. With
``@lazy_dataclass`` the class is left as written until its first instance is made or its fields
are asked for (``dataclasses.fields``, ``is_dataclass``, a subclass being made), and only then
is it handed to ``dataclasses.dataclass`` with the same options. For mypy it *is*
``dataclasses.dataclass``, so type checking sees no difference.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

_OPTIONS = "__rig_lazy_dataclass_options__"
_FIELDS = "__dataclass_fields__"
_MADE = "__rig_lazy_dataclass_made__"
# Re-entrant: making a subclass reads its bases' fields, which makes pending bases first.
_making = threading.RLock()

_C = TypeVar("_C", bound=type)
_R = TypeVar("_R")


class _FieldsOnFirstUse:
    """Stands in for ``__dataclass_fields__`` until the class is made; reading it makes the class."""

    def __get__(self, instance: object, owner: type) -> object:
        materialize(owner)
        return getattr(owner, _FIELDS)


_PENDING_FIELDS = _FieldsOnFirstUse()


def _new_on_first_use(cls: type, *args: object, **kwargs: object) -> object:
    # ``__new__`` rather than ``__init__``: type() looks ``__init__`` up after ``__new__`` returns,
    # so an instance made while another thread makes the class still gets the generated one, and
    # instances made without ``__init__`` (copy, pickle) make the class too. It stays once the
    # class is made (CPython cannot give a class back object's own ``__new__`` slot once it was
    # set), at the cost of one dict lookup per instance.
    if _MADE not in cls.__dict__:
        materialize(cls)
    return object.__new__(cls)


def materialize(cls: _C) -> _C:
    """Make every still-pending dataclass in ``cls``'s MRO, bases first; a no-op once made."""
    from rigcli.speed.compiled_methods import cached_exec

    with _making, cached_exec():
        for klass in reversed(cls.__mro__):
            options = klass.__dict__.get(_OPTIONS)
            if options is None:
                continue
            delattr(klass, _OPTIONS)
            delattr(klass, _FIELDS)
            dataclasses.dataclass(klass, **options)
        setattr(cls, _MADE, True)
    return cls


def field_names(cls: type) -> tuple[str, ...] | None:
    """``tuple(f.name for f in dataclasses.fields(cls))`` without making a pending lazy dataclass
    (None when ``cls`` is no dataclass).

    A state table's columns are its record's field names (``state/rows.py``), and a command may
    query a table whose records it never makes (a cached plan asks which workspaces expire: none).
    While a class and its dataclass bases are pending, their fields are their annotations, in the
    order ``dataclasses`` collects them; a class that may hold a pseudo-field (``ClassVar``,
    ``InitVar``, ``KW_ONLY``) or has a made dataclass base is made and asked.
    """
    names: dict[str, None] = {}
    for klass in reversed(cls.__mro__):
        own = klass.__dict__
        if _OPTIONS not in own:
            if isinstance(own.get(_FIELDS), dict):  # a made dataclass base
                return _made_field_names(cls)
            continue
        annotations = own.get("__annotations__", {})
        if not all(
            isinstance(text, str) and not any(word in text for word in _PSEUDO) for text in annotations.values()
        ):
            return _made_field_names(cls)
        names.update(dict.fromkeys(annotations))
    return tuple(names) if _OPTIONS in cls.__dict__ else _made_field_names(cls)


_PSEUDO = ("ClassVar", "InitVar", "KW_ONLY")  # anywhere in an annotation: let dataclasses decide


def _made_field_names(cls: type) -> tuple[str, ...] | None:
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(item.name for item in dataclasses.fields(cls))


def evolve(record: _R, **changes: object) -> _R:
    """``dataclasses.replace`` for a hot path: a copy of ``record`` with ``changes``, without calling
    ``__init__`` again (~20 bytecodes instead of ~230; a cached plan replaces twice per task).

    The same result as ``replace`` for a class whose every field is an ``__init__`` argument and
    that has no ``__post_init__`` (known per class on first use); any other class, or a change
    that names no field, goes through ``replace`` itself.
    """
    cls = type(record)
    plain = _evolvable.get(cls)
    if plain is None:
        plain = _evolvable[cls] = _copies_like_replace(cls)
    if not plain or not changes.keys() <= cls.__dict__[_FIELDS].keys():
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    copied: _R = object.__new__(cls)
    copied.__dict__.update(record.__dict__)
    copied.__dict__.update(changes)
    return copied


_evolvable: dict[type, bool] = {}


def positional_maker(cls: type[_R]) -> Callable[..., _R]:
    """``cls(*values)`` for a value of every field, in field order, without the generated ``__init__``
    (a frozen one sets each field through ``object.__setattr__``: ~8 bytecodes a field, and a
    cached plan reads a 19-field run row per task). The same object ``__init__`` would make, for a
    class ``evolve`` can copy (every field an argument, no ``__post_init__``); else ``cls`` itself.
    """
    materialize(cls)
    plain = _evolvable.get(cls)
    if plain is None:
        plain = _evolvable[cls] = _copies_like_replace(cls)
    if not plain:
        return cls
    names = tuple(cls.__dict__[_FIELDS])
    new = object.__new__

    def make(*values: object) -> _R:
        if len(values) != len(names):
            return cls(*values)  # the generated __init__ says what is wrong
        made: _R = new(cls)
        made.__dict__.update(zip(names, values, strict=True))
        return made

    return make


def _copies_like_replace(cls: type) -> bool:
    known = cls.__dict__.get(_FIELDS)
    if not isinstance(known, dict) or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        return False
    real = dataclasses.fields(cls)  # without ClassVar and InitVar pseudo-fields
    return len(real) == len(known) and all(item.init for item in real)


def _own_new(klass: type) -> bool:
    """Whether ``klass`` defines a ``__new__`` other than the stand-in of a lazy dataclass."""
    new = klass.__dict__.get("__new__")
    return new is not None and getattr(new, "__func__", None) is not _new_on_first_use


def _defer(cls: _C, options: dict[str, bool]) -> _C:
    if any(_own_new(klass) for klass in cls.__mro__[:-1]):
        # a __new__ of its own (or a base's) must run as written: make the class now
        return dataclasses.dataclass(cls, **options)  # type: ignore[return-value]
    setattr(cls, _OPTIONS, options)
    setattr(cls, _FIELDS, _PENDING_FIELDS)
    cls.__new__ = staticmethod(_new_on_first_use)  # type: ignore[assignment]
    return cls


def _lazy_dataclass(
    cls: _C | None = None, /, *, frozen: bool = False, eq: bool = True, repr: bool = True
) -> _C | Callable[[_C], _C]:
    options = {"frozen": frozen, "eq": eq, "repr": repr}
    if cls is None:
        return lambda klass: _defer(klass, options)
    return _defer(cls, options)


if TYPE_CHECKING:
    from dataclasses import dataclass as lazy_dataclass
else:
    lazy_dataclass = _lazy_dataclass

__all__ = ["evolve", "field_names", "lazy_dataclass", "materialize", "positional_maker"]
