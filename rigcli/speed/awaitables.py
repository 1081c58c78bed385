"""``inspect.isawaitable`` and ``inspect.iscoroutinefunction`` without importing ``inspect``.

The engine asks both of every handler, hook and provider answer it awaits, and ``inspect`` (with
``dis``, ``linecache``, ``tokenize`` and the enum of its parameter kinds) costs ~35M instructions
to import: a tenth of a docker ``rig fork``. The same tests, on what ``inspect`` would read; a
callable that is not a plain function (a method, a partial, one with attributes set on it) is
still handed to ``inspect``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from types import CoroutineType, FunctionType, GeneratorType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from typing_extensions import TypeIs

_CO_COROUTINE = 0x0080  # inspect.CO_COROUTINE
_CO_ITERABLE_COROUTINE = 0x0100  # inspect.CO_ITERABLE_COROUTINE


def isawaitable(value: object) -> TypeIs[Awaitable[Any]]:
    """``inspect.isawaitable(value)``: a coroutine, a generator-based coroutine, or anything with ``__await__``."""
    return (
        isinstance(value, CoroutineType)
        or (isinstance(value, GeneratorType) and bool(value.gi_code.co_flags & _CO_ITERABLE_COROUTINE))
        or isinstance(value, Awaitable)
    )


def iscoroutinefunction(fn: object) -> bool:
    """``inspect.iscoroutinefunction(fn)``: read off a plain function's code flags, else asked of inspect."""
    if type(fn) is FunctionType and not fn.__dict__:  # no marker (3.12's), no __wrapped__: its code says
        return bool(fn.__code__.co_flags & _CO_COROUTINE)
    import inspect

    return inspect.iscoroutinefunction(fn)


__all__ = ["isawaitable", "iscoroutinefunction"]
