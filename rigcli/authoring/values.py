"""Provider definitions and the config values they may hold: env(), secret() and resolvers."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rigcli.errors import ConfigError

if TYPE_CHECKING:
    from rigcli.provider_api import ProviderPlugin


class SecretValue(str):
    """A resolved secret: the real string for providers, masked wherever it is shown."""

    def __repr__(self) -> str:
        return "SecretValue('***')"


@dataclass(frozen=True)
class EnvRef:
    """Read an environment variable when the config is resolved (after .env is loaded)."""

    name: str
    default: str | None = None
    secret: bool = False

    def resolve(self) -> str:
        value = os.environ.get(self.name)
        if value is None or value == "":
            if self.default is None:
                raise ConfigError(f"Missing required environment variable {self.name}")
            value = self.default
        return SecretValue(value) if self.secret else value


def env(name: str, default: str | None = None) -> EnvRef:
    """An environment variable as a provider config value; missing without default is an error."""
    return EnvRef(name, default)


def secret(name: str, default: str | None = None) -> EnvRef:
    """Like env(), but the value is a secret: never stored, logged or printed."""
    return EnvRef(name, default, secret=True)


@dataclass(frozen=True)
class ProviderDefinition:
    """``define_provider(...)``: a provider id, its unresolved config and an optional inline plugin."""

    provider_id: str
    config: Mapping[str, object] = field(default_factory=dict)  # values may be env(), secret(), resolvers
    plugin: ProviderPlugin | None = None

    def resolve_config(self) -> dict[str, object]:
        resolved = _resolve(self.config, f"provider {self.provider_id} config")
        if not isinstance(resolved, dict):
            raise ConfigError("Provider config must resolve to an object")
        return resolved


def define_provider(
    provider_id: str,
    config: Mapping[str, object] | None = None,
    /,
    *,
    plugin: ProviderPlugin | None = None,
    **options: object,
) -> ProviderDefinition:
    """Define a provider for a workflow's scope; ``plugin=`` passes a plugin object inline."""
    if not isinstance(provider_id, str) or not provider_id.strip():
        raise ConfigError("define_provider needs a non-empty provider id")
    merged: dict[str, object] = dict(config or {})
    merged.update(options)
    if plugin is not None and not hasattr(plugin, "create_provider"):
        raise ConfigError(f"Provider {provider_id} plugin must have create_provider(setup)")
    return ProviderDefinition(provider_id, merged, plugin)


def _resolve(value: object, where: str) -> object:
    if isinstance(value, EnvRef):
        return value.resolve()
    if isinstance(value, Mapping):
        return {str(key): _resolve(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_resolve(item, where) for item in value]
    if callable(value) and not isinstance(value, type):
        if inspect.iscoroutinefunction(value):
            raise ConfigError(f"{where}: async resolvers are not supported; use a plain function")
        return _resolve(_call_resolver(value, where), where)
    return value


def _call_resolver(resolver: Callable[[], object], where: str) -> object:
    try:
        return resolver()
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"{where}: resolver raised {type(exc).__name__}: {exc}") from exc


def contains_secret(value: object) -> bool:
    if isinstance(value, SecretValue):
        return True
    if isinstance(value, Mapping):
        return any(contains_secret(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_secret(item) for item in value)
    return False


def mask_secrets(value: object) -> object:
    """A copy of a resolved config safe to show: every secret becomes "***"."""
    if isinstance(value, SecretValue):
        return "***"
    if isinstance(value, Mapping):
        return {key: mask_secrets(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_secrets(item) for item in value]
    return value


__all__ = [
    "EnvRef",
    "ProviderDefinition",
    "SecretValue",
    "contains_secret",
    "define_provider",
    "env",
    "mask_secrets",
    "secret",
]
