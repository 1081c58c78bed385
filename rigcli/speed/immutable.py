"""Immutable dataclass instances without ``frozen=True``: fields are written once, by ``__init__``.

``@dataclass(frozen=True)`` generates a ``__setattr__`` and a ``__delattr__`` for every class
(and its ``__init__`` goes through ``object.__setattr__`` per field); ~30 event classes are
imported by every command, so a cached plan paid for ~60 generated functions it never calls.
One ``__setattr__`` on a shared base does the same job for all of them.
"""

from __future__ import annotations

import dataclasses


class WriteOnce:
    """Base for ``@dataclass`` classes whose fields may be set once (by ``__init__``) and never again.

    Assigning a set field, an unknown attribute, or deleting any raises ``FrozenInstanceError``,
    as a frozen dataclass would.
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        fields: dict[str, object] = getattr(type(self), "__dataclass_fields__", {})
        if name in self.__dict__ or name not in fields:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


__all__ = ["WriteOnce"]
