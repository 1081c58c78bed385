"""What every node shares: a JSON configure stack and a cache scope, changed only by copying."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, TypeVar

from rigcli.errors import ConfigError
from rigcli.jsonutil import JsonObject, JsonValue, find_non_json, to_plain_json

if TYPE_CHECKING:
    from typing_extensions import Self

_V = TypeVar("_V")
EMPTY_CONFIG: Mapping[str, JsonValue] = MappingProxyType({})


def frozen(mapping: Mapping[str, _V]) -> Mapping[str, _V]:
    """A read-only copy, so a node's mappings cannot change under the nodes that share them."""
    return MappingProxyType(dict(mapping))


def _json_config(values: Mapping[str, object]) -> JsonObject:
    bad = find_non_json(values)
    if bad is not None:
        raise ConfigError(f"configure input must be JSON-serializable (at {bad})")
    return to_plain_json(values)


def _merge_config(
    current: Mapping[str, JsonValue], args: tuple[object, ...], kwargs: Mapping[str, object]
) -> Mapping[str, JsonValue]:
    merged = dict(current)
    for arg in args:
        if not isinstance(arg, Mapping):
            raise ConfigError("configure takes a dict or keyword arguments")
        merged.update(_json_config(arg))
    merged.update(_json_config(kwargs))
    return frozen(merged)


class NodeMethods:
    """configure/global_/local shared by every node kind (each a frozen dataclass)."""

    config: Mapping[str, JsonValue]
    cache_scope: str | None
    if TYPE_CHECKING:  # set by @lazy_dataclass on each node class; lets replace() take self
        __dataclass_fields__: ClassVar[dict[str, Field[object]]]

    def configure(self, *values: Mapping[str, object], **options: object) -> Self:
        """Stack JSON config for this subtree; calls on one node shallow-merge (later keys win)."""
        return replace(self, config=_merge_config(self.config, values, options))

    def global_(self) -> Self:
        """Cache this subtree in the global fragment cache, shared across projects."""
        return replace(self, cache_scope="global")

    def local(self) -> Self:
        """Cache this subtree in the project's own state again."""
        return replace(self, cache_scope="local")


__all__ = ["EMPTY_CONFIG", "NodeMethods", "frozen"]
