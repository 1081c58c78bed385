"""A plain function's parameters read off its code object, as ``inspect.signature`` gives them, without inspect.

Loading a config checks the parameters of every handler it names (``handler_params.py``).
``inspect.signature`` answers for any callable, but importing ``inspect`` costs a cached plan
~17M instructions (with ``dis``, ``linecache`` and ``importlib.machinery``), and a handler is
nearly always a plain ``def``, whose code object spells its parameters out. Anything else — a
function with attributes set on it (``functools.wraps`` sets ``__wrapped__``; ``__signature__``),
a method, a partial, a callable object — gets None here, and the caller asks ``inspect``.
"""

from __future__ import annotations

from types import FunctionType

# ``inspect.Parameter``'s kinds, with the values of ``inspect._ParameterKind`` (an IntEnum).
POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = range(5)
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08

Parameter = tuple[str, int, bool]  # name, kind, whether it has a default


def plain_parameters(fn: object) -> tuple[Parameter, ...] | None:
    """``fn``'s parameters in ``inspect.signature``'s order when it is a plain function; else None."""
    if type(fn) is not FunctionType or fn.__dict__:
        return None
    code = fn.__code__
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    first_default = positional - len(fn.__defaults__ or ())
    keyword_defaults = fn.__kwdefaults__ or {}
    parameters: list[Parameter] = [
        (
            names[index],
            POSITIONAL_ONLY if index < code.co_posonlyargcount else POSITIONAL_OR_KEYWORD,
            index >= first_default,
        )
        for index in range(positional)
    ]
    rest = positional + keyword_only  # *args, then **kwargs, are named after the keyword-only ones
    if code.co_flags & _CO_VARARGS:
        parameters.append((names[rest], VAR_POSITIONAL, False))
        rest += 1
    parameters.extend(
        (name, KEYWORD_ONLY, name in keyword_defaults) for name in names[positional : positional + keyword_only]
    )
    if code.co_flags & _CO_VARKEYWORDS:
        parameters.append((names[rest], VAR_KEYWORD, False))
    return tuple(parameters)


__all__ = [
    "KEYWORD_ONLY",
    "POSITIONAL_ONLY",
    "POSITIONAL_OR_KEYWORD",
    "VAR_KEYWORD",
    "VAR_POSITIONAL",
    "Parameter",
    "plain_parameters",
]
