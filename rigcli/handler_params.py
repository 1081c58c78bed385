"""Which parameters a handler may ask for, checked when the config loads."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from rigcli.authoring.operations import Handler
from rigcli.errors import ConfigError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.parameters import POSITIONAL_ONLY, VAR_KEYWORD, VAR_POSITIONAL, Parameter, plain_parameters

if TYPE_CHECKING:
    import inspect
else:
    inspect = lazy_module("inspect")


TASK_NAMES = ("step", "providers", "config", "local", "log")
HOOK_NAMES = (*TASK_NAMES, "workflow", "workspace", "input")


def check_handler_params(fn: Handler, base: tuple[str, ...], scope: Mapping[str, object], label: str) -> None:
    """Fail at load when a handler asks for a parameter rig cannot give it."""
    available = [*base, *sorted(name for name in scope if name not in base)]
    parameters = _parameters(fn)
    if parameters is None:
        return  # builtins and some C callables have no signature; they get no arguments
    for name, kind, has_default in parameters:
        if kind in (VAR_KEYWORD, VAR_POSITIONAL):
            continue
        if kind == POSITIONAL_ONLY or name not in available:
            if has_default:
                continue
            where = _source_location(fn)
            raise ConfigError(
                f'{where}{label} handler asks for "{name}", which is not available (available: {", ".join(available)})'
            )


def _parameters(fn: Handler) -> tuple[Parameter, ...] | None:
    try:
        hash(fn)
    except TypeError:  # a callable object with __eq__ and no __hash__
        return _read_parameters(fn)
    return _remembered_parameters(fn)


def _read_parameters(fn: Handler) -> tuple[Parameter, ...] | None:
    plain = plain_parameters(fn)  # a plain def: no inspect (speed/parameters.py)
    if plain is not None:
        return plain

    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return tuple((p.name, int(p.kind), p.default is not p.empty) for p in parameters)


_remembered_parameters = lru_cache(maxsize=256)(_read_parameters)  # tasks often share one handler


def _source_location(fn: Handler) -> str:

    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return ""
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}: "


__all__ = ["HOOK_NAMES", "TASK_NAMES", "check_handler_params"]
