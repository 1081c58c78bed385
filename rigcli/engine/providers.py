"""Find provider plugins, create one controller per definition, and describe scopes for fingerprints."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

from rigcli.authoring.values import ProviderDefinition, SecretValue
from rigcli.errors import ProviderError, RigError, describe_exception
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import (
    Cancellation,
    EffectJournal,
    KeyValueStore,
    LocalHost,
    ProviderController,
    ProviderPlugin,
    ProviderSetup,
    SupportsIdentity,
    UnjournaledEffects,
)
from rigcli.speed.awaitables import isawaitable
from rigcli.speed.digests import sha256
from rigcli.speed.entry_points import PROVIDERS_GROUP as ENTRY_POINT_GROUP
from rigcli.speed.entry_points import entry_point_values
from rigcli.speed.entry_points import load as load_entry_point
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import hmac
else:
    hmac = lazy_module("hmac")


T = TypeVar("T")
ProviderFactory = Callable[[ProviderSetup], "ProviderController | Awaitable[ProviderController]"]
# The journal for (provider id, owner): ("run", id) or ("workspace", id), or None for no owner.
EffectsFactory = Callable[[str, "tuple[str, str] | None"], EffectJournal]


async def maybe_await(value: T | Awaitable[T]) -> T:
    """Providers and hosts may answer with a plain value or an awaitable one."""
    if isawaitable(value):  # speed/awaitables.py: no inspect for it
        return await value
    return value


class Plugins:
    """Provider plugins by id: inline in a definition, passed to the engine, or installed (entry points)."""

    def __init__(self, explicit: Iterable[ProviderPlugin], index: Path | None) -> None:
        self._explicit = {plugin.provider_id: plugin for plugin in explicit}
        self._index = index  # where the installed plugins' entry points are remembered
        self._entry_points: dict[str, str] | None = None

    def installed(self) -> list[str]:
        """The ids of the installed plugins (``rig.providers`` entry points)."""
        return sorted(self._installed())

    def _installed(self) -> dict[str, str]:
        if self._entry_points is None:
            self._entry_points = entry_point_values(ENTRY_POINT_GROUP, self._index)
        return self._entry_points

    def find(self, definition: ProviderDefinition) -> ProviderPlugin | None:
        """The plugin that provides ``definition``; None when nothing claims its id."""
        if definition.plugin is not None:
            return _as_plugin(definition.plugin, definition.provider_id)
        return self.by_id(definition.provider_id)

    def by_id(self, provider_id: str) -> ProviderPlugin | None:
        if provider_id in self._explicit:
            return self._explicit[provider_id]
        entry = self._installed().get(provider_id)
        if entry is None:
            return None
        try:
            loaded = load_entry_point(entry)
        except Exception as exc:
            raise ProviderError(f"Provider plugin {provider_id} failed to load: {describe_exception(exc)}") from exc
        return _as_plugin(loaded, provider_id)


class ProviderHub:
    """Controllers for the provider definitions a workflow uses, created on first use."""

    def __init__(
        self,
        *,
        plugins: Iterable[ProviderPlugin],
        provider_factory: ProviderFactory | None,
        local: LocalHost,
        project_storage: Callable[[str], KeyValueStore],
        host_storage: Callable[[str], KeyValueStore],
        project_dir: Path,
        state_dir: Path,
        secret_key_path: Path,
        cancellation: Cancellation,
        effects: EffectsFactory | None = None,
        plugin_index: Path | None = None,
        workflows_of: Callable[[ProviderDefinition], tuple[str, ...]] | None = None,
    ) -> None:
        self._finder = Plugins(plugins, plugin_index)
        self._factory = provider_factory
        self._local = local
        self._project_storage = project_storage
        self._host_storage = host_storage
        self._project_dir = project_dir
        self._state_dir = state_dir
        self._secret_key_path = secret_key_path
        self.cancellation = cancellation
        self._effects = effects
        self._workflows_of = workflows_of
        # Keyed by id(definition): definitions are immutable and live as long as the loaded config.
        self._controllers: dict[int, ProviderController] = {}
        self._configs: dict[int, dict[str, object]] = {}
        self._plugins: dict[int, ProviderPlugin | None] = {}
        self._secret_key: bytes | None = None

    def resolved_config(self, definition: ProviderDefinition) -> dict[str, object]:
        key = id(definition)
        if key not in self._configs:
            self._configs[key] = definition.resolve_config()
        return self._configs[key]

    def plugin_for(self, definition: ProviderDefinition) -> ProviderPlugin | None:
        key = id(definition)
        if key not in self._plugins:
            self._plugins[key] = self._finder.find(definition)
        return self._plugins[key]

    def setup_for(self, definition: ProviderDefinition) -> ProviderSetup:
        return ProviderSetup(
            provider_id=definition.provider_id,
            config=self.resolved_config(definition),
            storage=self._project_storage(definition.provider_id),
            host_storage=self._host_storage(definition.provider_id),
            local=self._local,
            project_dir=str(self._project_dir),
            state_dir=str(self._state_dir),
            cancellation=self.cancellation,
            effects=self.effects_for(definition.provider_id),
            workflows=self._workflows_of(definition) if self._workflows_of is not None else (),
        )

    def effects_for(self, provider_id: str, owner: tuple[str, str] | None = None) -> EffectJournal:
        """The effects journal of ``provider_id``, recording ``owner`` (a run or workspace) if given."""
        return self._effects(provider_id, owner) if self._effects is not None else UnjournaledEffects()

    async def controller(self, definition: ProviderDefinition) -> ProviderController:
        key = id(definition)
        if key in self._controllers:
            return self._controllers[key]
        plugin = self.plugin_for(definition)
        setup = self.setup_for(definition)
        try:
            if plugin is not None:
                controller = await maybe_await(plugin.create_provider(setup))
            elif self._factory is not None:
                controller = await maybe_await(self._factory(setup))
            else:
                raise ProviderError(
                    f"Provider {definition.provider_id} is not installed: no plugin registers it in the "
                    f"{ENTRY_POINT_GROUP} entry-point group (pass plugin= to define_provider for a local one)"
                )
        except RigError:
            raise
        except Exception as exc:
            raise ProviderError(
                f"Provider {definition.provider_id} failed to start: {describe_exception(exc)}"
            ) from exc
        if not isinstance(controller, ProviderController):
            raise ProviderError(f"Provider {definition.provider_id} returned no controller with runtime(context)")
        self._controllers[key] = controller
        return controller

    async def controllers(
        self, scopes: Iterable[Mapping[str, ProviderDefinition]]
    ) -> list[tuple[str, ProviderDefinition, ProviderController]]:
        """(scope name, definition, controller) for every distinct definition in these scopes."""
        seen: dict[int, tuple[str, ProviderDefinition, ProviderController]] = {}
        for scope in scopes:
            for name, definition in scope.items():
                if id(definition) not in seen:
                    seen[id(definition)] = (name, definition, await self.controller(definition))
        return list(seen.values())

    def _keyed(self, value: str) -> str:
        if self._secret_key is None:
            self._secret_key = _load_secret_key(self._secret_key_path)

        return "hmac-sha256:" + hmac.new(self._secret_key, value.encode(), "sha256").hexdigest()

    def _fingerprintable(self, value: object) -> JsonValue:
        if isinstance(value, SecretValue):
            return self._keyed(str(value))
        if isinstance(value, Mapping):
            return {str(k): self._fingerprintable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._fingerprintable(v) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        return f"{type(value).__module__}.{type(value).__qualname__}:{value!r}"

    def describe_scope(self, scope: Mapping[str, ProviderDefinition]) -> dict[str, JsonValue]:
        """What the provider fingerprint covers, by scope name: id, resolved config, plugin identity."""
        described: dict[str, JsonValue] = {}
        for name in sorted(scope):
            definition = scope[name]
            plugin = self.plugin_for(definition)
            config: Mapping[str, object] = self.resolved_config(definition)
            if isinstance(plugin, SupportsIdentity):  # the part of it that says what its snapshots are
                config = plugin.identity_config(config)
            described[name] = {
                "provider_id": definition.provider_id,
                "config": self._fingerprintable(config),
                "plugin": _plugin_identity(plugin),
            }
        return described


def _as_plugin(candidate: object, provider_id: str) -> ProviderPlugin:
    if not isinstance(candidate, ProviderPlugin):
        raise ProviderError(f"Provider plugin {provider_id} has no provider_id and create_provider(setup)")
    return candidate


def _plugin_identity(plugin: ProviderPlugin | None) -> JsonValue:
    if plugin is None:
        return None
    kind = plugin if isinstance(plugin, (type, ModuleType)) else type(plugin)  # inspect.isclass/ismodule
    module = getattr(kind, "__module__", None) or getattr(kind, "__name__", "")
    return {
        "provider_id": getattr(plugin, "provider_id", None),
        "type": f"{module}.{getattr(kind, '__qualname__', '')}",
    }


FINGERPRINT_KEY_ENV = "RIG_FINGERPRINT_KEY"


def _load_secret_key(path: Path) -> bytes:
    """A per-user random key: secrets change fingerprints without being recoverable from them.

    ``$RIG_FINGERPRINT_KEY``, when set, replaces it: a team sharing one state (DESIGN §10) sets
    the same value everywhere (CI and each developer), so tasks under a provider configured with
    ``secret()`` get the same provider fingerprint in every clone and are shared too. Without it
    such tasks are per user (``provider-changed`` for a teammate). The key never enters the state,
    so a leaked database still does not let anyone test guesses of the secrets.
    """
    shared = os.environ.get(FINGERPRINT_KEY_ENV, "")
    if shared:
        return sha256(b"rig-fingerprint-key:" + shared.encode()).digest()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = os.urandom(32)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    try:
        os.link(temp, path)  # first writer wins; others read the winner's key
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)
    return path.read_bytes()


__all__ = [
    "ENTRY_POINT_GROUP",
    "EffectsFactory",
    "Plugins",
    "ProviderFactory",
    "ProviderHub",
    "maybe_await",
]
