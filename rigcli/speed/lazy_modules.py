"""Heavy modules named at a module's top and imported on first use: ``asyncio = lazy_module("asyncio")``.

A module that needs a heavy dependency (asyncio, inspect, json, pathlib, httpx, Rich...) in only some
of its functions used to import it inside each of them, so that a command that never calls them
(a cached ``rig plan``, a no-op ``rig apply``, ``rig --version``) does not pay for it: ~13M
instructions for contextlib, ~31M for json, ~41M for typing, ~43M for pathlib, measured on top of
``python -c pass``'s ~38M. The dependency is declared once at the module's top instead::

    if TYPE_CHECKING:
        import asyncio
    else:
        asyncio = lazy_module("asyncio")

The stand-in holds nothing of its own: the first attribute read imports the real module (after
``before``, e.g. httpx's ``load_httpx``), and that attribute and every later one are the real
module's (copied into the stand-in, so later reads cost a dict lookup). It is never put into
``sys.modules``: an ``import asyncio`` anywhere gets the real module, as it always would.
"""

from __future__ import annotations

import sys
from types import ModuleType

TYPE_CHECKING = False  # not typing's: the speed room imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Callable


class _LazyModule(ModuleType):
    """Stands for the module ``__name__`` until an attribute of it is read."""

    def __init__(self, name: str, before: Callable[[], None] | None) -> None:
        super().__init__(name)
        self.__dict__["_rig_before"] = before

    def __getattr__(self, attribute: str) -> object:
        before = self.__dict__.pop("_rig_before", None)
        if before is not None:
            before()
        __import__(self.__name__)
        real = sys.modules[self.__name__]
        self.__dict__.update(vars(real))
        return getattr(real, attribute)


def lazy_module(name: str, *, before: Callable[[], None] | None = None) -> ModuleType:
    """A stand-in for module ``name``, imported at the first read of one of its attributes."""
    found = sys.modules.get(name)
    return found if found is not None else _LazyModule(name, before)


__all__ = ["lazy_module"]
