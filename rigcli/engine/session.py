"""Per-command provider work: controllers, checks, scope fingerprints, runtimes, artifacts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field

from rigcli.authoring.values import ProviderDefinition
from rigcli.cachekeys import provider_fingerprint, provider_parts
from rigcli.engine.interactions import InteractionBroker, Presenter
from rigcli.engine.providers import ProviderHub, maybe_await
from rigcli.errors import ProviderError, RigError, UnconfirmedArtifactError, describe_exception
from rigcli.events import ArtifactUnconfirmed, Event, from_provider
from rigcli.jsonutil import JsonValue, to_plain_json
from rigcli.provider_api import (
    EventData,
    LocalHost,
    ProviderCheck,
    ProviderController,
    RuntimeContext,
    SupportsArtifactValidation,
    SupportsChecks,
)
from rigcli.speed.awaitables import isawaitable
from rigcli.speed.coroutines import need_event_loop
from rigcli.speed.records import lazy_dataclass

Scope = Mapping[str, ProviderDefinition]
RuntimeFactory = Callable[[], Awaitable[object]]
CheckRow = dict[str, JsonValue]  # a provider check as shown by `rig plan`: the check plus who gave it


@lazy_dataclass
class ProviderSession:
    """Everything one command needs from providers, computed once: apply and fork share one.

    ``mode`` is what checks are told: ``plan`` (no side effects), ``offline`` (no side effects and
    nothing asked of anything remote: ``rig ls --no-probe``; artifacts are not validated either) or
    ``require`` (a run is about to use the provider; a check that says ``required`` fails it).
    """

    hub: ProviderHub
    workflow: str
    local: LocalHost
    emit: Callable[[Event], None]
    presenter: Presenter | None
    mode: str
    checks: dict[int, list[CheckRow]] = field(default_factory=dict)  # by id(definition)
    _fingerprints: dict[int, str] = field(default_factory=dict)
    _controllers: dict[int, ProviderController] = field(default_factory=dict)
    _definitions: dict[int, ProviderDefinition] = field(default_factory=dict)  # by id(controller)
    # Each artifact validation asked, in order: (the definition whose controller answered, the ref,
    # whether it was valid). ``rig ls`` remembers them and asks again without the config.
    validations: list[tuple[ProviderDefinition | None, dict[str, JsonValue], bool]] = field(default_factory=list)
    unconfirmed: set[str] = field(default_factory=set)  # what ArtifactUnconfirmed said, once each

    async def prepare(self, scopes: Sequence[Scope]) -> None:
        """Create controllers for every provider in these scopes and run their checks."""
        for name, definition, controller in await self.hub.controllers(scopes):
            self._controllers[id(definition)] = controller
            self._definitions[id(controller)] = definition
            self.checks[id(definition)] = await self._run_checks(name, definition, controller)

    async def _run_checks(
        self, name: str, definition: ProviderDefinition, controller: ProviderController
    ) -> list[CheckRow]:
        if not isinstance(controller, SupportsChecks):
            return []
        try:
            results: Sequence[ProviderCheck] = await maybe_await(
                controller.checks(self.mode, workflow=self.workflow, local=self.local)
            )
        except RigError:
            raise
        except Exception as exc:  # the provider's failure, not rig's: exit 1, naming it
            who = name if name == definition.provider_id else f"{name} ({definition.provider_id})"
            raise ProviderError(f"Provider {who} checks failed: {describe_exception(exc)}") from exc
        shaped: list[CheckRow] = []
        for check in results or []:
            plain = to_plain_json(check)
            item: CheckRow = {"provider_id": definition.provider_id, "provider_name": name}
            item.update(plain if isinstance(plain, dict) else {})
            item.setdefault("status", "ok")
            shaped.append(item)
            if self.mode == "require" and item["status"] == "required":
                label = item.get("label") or item.get("id", "check")
                raise ProviderError(f"Provider check required: {label}. {item.get('message', '')}".rstrip())
        return shaped

    def all_checks(self) -> list[CheckRow]:
        return [check for checks in self.checks.values() for check in checks]

    def fingerprint(self, scope: Scope) -> str:
        """The provider fingerprint of a task with this scope (see cachekeys, ``provider-v1``)."""
        key = id(scope)
        if key not in self._fingerprints:
            self._fingerprints[key] = provider_fingerprint(self.hub.describe_scope(scope), self._check_inputs(scope))
        return self._fingerprints[key]

    def fingerprint_parts(self, scope: Scope) -> dict[str, str]:
        """The named parts of ``fingerprint(scope)``: each provider and its checks, hashed alone."""
        return provider_parts(self.hub.describe_scope(scope), self._check_inputs(scope))

    def _check_inputs(self, scope: Scope) -> list[JsonValue]:
        checks: list[JsonValue] = []
        for name in sorted(scope):
            for check in self.checks.get(id(scope[name]), []):
                status = check.get("status")
                checks.append(
                    {
                        "provider_name": name,
                        "provider_id": check["provider_id"],
                        "id": check.get("id"),
                        # A daemon that does not answer now is the same provider (SupportsChecks).
                        "status": "ok" if status == "error" else status,
                        "fingerprint": check.get("fingerprint", check.get("value")),
                    }
                )
        return checks

    def controllers(self) -> list[ProviderController]:
        """Every controller this command made, one per provider definition."""
        return list(self._controllers.values())

    def controller_for(self, provider_id: str, scope: Scope) -> ProviderController | None:
        """The controller of ``provider_id``: the one in ``scope`` first, else any this command made."""
        for definition in scope.values():
            if definition.provider_id == provider_id and id(definition) in self._controllers:
                return self._controllers[id(definition)]
        for controller in self._controllers.values():
            if controller.provider_id == provider_id:
                return controller
        return None

    async def artifact_problem(self, artifacts: Sequence[JsonValue], scope: Scope) -> str | None:
        """None when every artifact validates; otherwise the detail for ``artifact-invalid``. Offline,
        nothing is asked: every artifact is taken to be there."""
        if self.mode == "offline":
            return None
        for ref in artifacts:
            provider_id = ref.get("provider") if isinstance(ref, dict) else None
            if not isinstance(provider_id, str) or not provider_id:
                return "artifact is missing provider id"
            controller = self.controller_for(provider_id, scope)
            if not isinstance(controller, SupportsArtifactValidation):
                continue
            assert isinstance(ref, dict)
            try:
                valid = await maybe_await(controller.validate_artifact(ref))
            except UnconfirmedArtifactError as exc:  # kept where it cannot be asked now: not gone
                self._unconfirmed(provider_id, str(exc))
                valid = True
            except RigError:
                raise  # e.g. the daemon is down: say so rather than rebuild everything
            except Exception:
                valid = False
            self.validations.append((self._definitions.get(id(controller)), ref, bool(valid)))
            if not valid:
                return f"{provider_id} artifact validation failed"
        return None

    def _unconfirmed(self, provider_id: str, message: str) -> None:
        """Warn once per command for each thing a provider could not ask (the same registry, many snapshots)."""
        if message not in self.unconfirmed:
            self.unconfirmed.add(message)
            self.emit(ArtifactUnconfirmed(provider_id=provider_id, message=message))

    def runtime_factories(
        self,
        scope: Scope,
        *,
        node_path: str,
        workspace: str | None = None,
        owner: tuple[str, str] | None = None,
        cache_key: str | None = None,
    ) -> dict[str, RuntimeFactory]:
        """One lazy runtime maker per provider in scope, so handlers only start what they use.

        ``owner`` (``("run", id)`` or ``("workspace", id)``) is recorded on every effect the
        runtimes journal: what ``rm`` cleans and what ``gc`` counts as referred to. ``cache_key``:
        the running task's.
        """

        def maker(name: str, definition: ProviderDefinition) -> RuntimeFactory:
            async def make() -> object:
                controller = await self.hub.controller(definition)
                context = RuntimeContext(
                    provider_name=name,
                    node_path=node_path,
                    workflow=self.workflow,
                    emit=self.node_emitter(node_path),
                    local=self.local,
                    cancellation=self.hub.cancellation,
                    interaction=InteractionBroker(
                        node_path=node_path, emit=self.emit, presenter=self.presenter, local=self.local
                    ),
                    workspace=workspace,
                    effects=self.hub.effects_for(definition.provider_id, owner),
                    cache_key=cache_key,
                )
                runtime = controller.runtime(context)
                if isawaitable(runtime):
                    await need_event_loop()  # an async runtime() may await what only a loop settles
                    return await runtime
                return runtime

            return make

        return {name: maker(name, definition) for name, definition in scope.items()}

    def node_emitter(self, node_path: str) -> Callable[[EventData], None]:
        """``context.emit`` for a provider runtime: its mappings become typed events of this node."""

        def emit(event: EventData) -> None:
            self.emit(from_provider(event, node_path))

        return emit


__all__ = ["CheckRow", "ProviderSession", "RuntimeFactory", "Scope"]
