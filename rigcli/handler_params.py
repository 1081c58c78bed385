"""Which parameters a handler may ask for, checked when the config loads."""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from functools import lru_cache

from rigcli.authoring.operations import Handler
from rigcli.errors import ConfigError

TASK_NAMES = ("step", "providers", "config", "local", "log")
HOOK_NAMES = (*TASK_NAMES, "workflow", "workspace", "input")


def check_handler_params(fn: Handler, base: tuple[str, ...], scope: Mapping[str, object], label: str) -> None:
    """Fail at load when a handler asks for a parameter rig cannot give it."""
    available = [*base, *sorted(name for name in scope if name not in base)]
    parameters = _parameters(fn)
    if parameters is None:
        return  # builtins and some C callables have no signature; they get no arguments
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
            continue
        if parameter.kind is parameter.POSITIONAL_ONLY or parameter.name not in available:
            if parameter.default is not parameter.empty:
                continue
            where = _source_location(fn)
            raise ConfigError(
                f'{where}{label} handler asks for "{parameter.name}", which is not available '
                f"(available: {', '.join(available)})"
            )


def _parameters(fn: Handler) -> tuple[inspect.Parameter, ...] | None:
    try:
        hash(fn)
    except TypeError:  # a callable object with __eq__ and no __hash__
        return _signature_parameters(fn)
    return _remembered_parameters(fn)


def _signature_parameters(fn: Handler) -> tuple[inspect.Parameter, ...] | None:
    try:
        return tuple(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


_remembered_parameters = lru_cache(maxsize=256)(_signature_parameters)  # tasks often share one handler


def _source_location(fn: Handler) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return ""
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}: "


__all__ = ["HOOK_NAMES", "TASK_NAMES", "check_handler_params"]
