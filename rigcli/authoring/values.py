"""Provider definitions and the config values they may hold: env(), secret() and resolvers."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from rigcli import masking
from rigcli.errors import ConfigError, describe_exception
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from rigcli.provider_api import ProviderPlugin

if TYPE_CHECKING:
    import inspect
else:
    inspect = lazy_module("inspect")


class SecretValue(str):
    """A resolved secret: the real string for providers, masked wherever it is shown.

    Making one registers it with the process-wide masker, so wherever it travels (a log line, a
    returned ctx, an exception message) it is shown as ``***``.
    """

    def __new__(cls, value: str) -> SecretValue:
        masking.register(value)
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return "SecretValue('***')"


@lazy_dataclass(frozen=True)
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

    def declare(self) -> None:
        """Register a secret's current value for masking without resolving anything else."""
        if self.secret:
            masking.register(os.environ.get(self.name) or self.default)


def env(name: str, default: str | None = None) -> EnvRef:
    """An environment variable as a provider config value; missing without default is an error."""
    return EnvRef(name, default)


def secret(name: str, default: str | None = None) -> EnvRef:
    """Like env(), but the value is a secret: never stored, logged or printed."""
    return EnvRef(name, default, secret=True)


@lazy_dataclass(frozen=True)
class ProviderDefinition:
    """``define_provider(...)``: a provider id, its unresolved config and an optional inline plugin."""

    provider_id: str
    config: Mapping[str, object] = field(default_factory=dict)  # values may be env(), secret(), resolvers
    plugin: ProviderPlugin | None = None

    def declare_secrets(self) -> None:
        """Mask this definition's ``secret(...)`` values from now on, even before it resolves.

        Called when a project loads, so a handler that prints such a value is masked even in a
        command that never starts the provider. Resolvers are not called here (they may be slow).
        """
        _declare(self.config)

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


def _declare(value: object) -> None:
    if isinstance(value, EnvRef):
        value.declare()
    elif isinstance(value, Mapping):
        for item in value.values():
            _declare(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _declare(item)


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
        raise ConfigError(f"{where}: resolver raised {describe_exception(exc)}") from exc


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
