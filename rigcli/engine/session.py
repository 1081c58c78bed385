"""Per-evaluation provider work: controllers, checks, scope fingerprints, runtimes, artifacts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rigcli.authoring.values import ProviderDefinition
from rigcli.engine.interactions import InteractionBroker
from rigcli.engine.providers import ProviderHub, maybe_await
from rigcli.errors import ProviderError, RigError
from rigcli.events import Event
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import LocalHost, RuntimeContext

Scope = Mapping[str, ProviderDefinition]


@dataclass
class ProviderSession:
    """Everything one plan/apply/fork/op needs from providers, computed once per evaluation."""

    hub: ProviderHub
    workflow: str
    local: LocalHost
    emit: Callable[[Event], None]
    presenter: Callable[[dict[str, Any]], Any] | None
    loop: asyncio.AbstractEventLoop
    mode: str  # "plan" | "require"
    checks: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # by id(definition)
    _fingerprints: dict[int, str] = field(default_factory=dict)
    _controllers: dict[int, Any] = field(default_factory=dict)

    async def prepare(self, scopes: list[Scope]) -> None:
        """Create controllers for every provider in these scopes and run their checks."""
        for name, definition, controller in await self.hub.controllers(scopes):
            self._controllers[id(definition)] = controller
            self.checks[id(definition)] = await self._run_checks(name, definition, controller)

    async def _run_checks(self, name: str, definition: ProviderDefinition, controller: Any) -> list[dict[str, Any]]:
        checker = getattr(controller, "checks", None)
        if checker is None:
            return []
        results = await maybe_await(checker(self.mode, workflow=self.workflow, local=self.local))
        shaped = []
        for check in results or []:
            item = {"provider_id": definition.provider_id, "provider_name": name, **dict(check)}
            item.setdefault("status", "ok")
            shaped.append(item)
            if self.mode == "require" and item["status"] == "required":
                label = item.get("label") or item.get("id", "check")
                raise ProviderError(f"Provider check required: {label}. {item.get('message', '')}".rstrip())
        return shaped

    def all_checks(self) -> list[dict[str, Any]]:
        return [check for checks in self.checks.values() for check in checks]

    def fingerprint(self, scope: Scope) -> str:
        key = id(scope)
        if key not in self._fingerprints:
            checks: list[JsonValue] = []
            for name in sorted(scope):
                for check in self.checks.get(id(scope[name]), []):
                    checks.append(
                        {
                            "provider_name": name,
                            "provider_id": check["provider_id"],
                            "id": check.get("id"),
                            "status": check.get("status"),
                            "fingerprint": check.get("fingerprint", check.get("value")),
                        }
                    )
            self._fingerprints[key] = self.hub.scope_fingerprint(scope, checks)
        return self._fingerprints[key]

    def controller_for_artifact(self, provider_id: str, scope: Scope) -> Any:
        for definition in scope.values():
            if definition.provider_id == provider_id and id(definition) in self._controllers:
                return self._controllers[id(definition)]
        for controller in self._controllers.values():
            if getattr(controller, "provider_id", None) == provider_id:
                return controller
        return None

    async def artifact_problem(self, artifacts: list[Any], scope: Scope) -> str | None:
        """None when every artifact validates; otherwise the detail for ``artifact-invalid``."""
        for ref in artifacts:
            provider_id = ref.get("provider") if isinstance(ref, Mapping) else None
            if not isinstance(provider_id, str) or not provider_id:
                return "artifact is missing provider id"
            controller = self.controller_for_artifact(provider_id, scope)
            validate = getattr(controller, "validate_artifact", None)
            if validate is None:
                continue
            try:
                valid = await maybe_await(validate(ref))
            except RigError:
                raise  # e.g. the daemon is down: say so rather than rebuild everything
            except Exception:
                valid = False
            if not valid:
                return f"{provider_id} artifact validation failed"
        return None

    def runtime_factories(
        self, scope: Scope, *, node_path: str, workspace: str | None = None
    ) -> dict[str, Callable[[], Awaitable[Any]]]:
        """One lazy runtime maker per provider in scope, so handlers only start what they use."""

        def maker(name: str, definition: ProviderDefinition) -> Callable[[], Awaitable[Any]]:
            async def make() -> Any:
                controller = await self.hub.controller(definition)
                context = RuntimeContext(
                    provider_name=name,
                    node_path=node_path,
                    workflow=self.workflow,
                    emit=self.node_emitter(node_path),
                    local=self.local,
                    cancellation=self.hub.cancellation,
                    interaction=InteractionBroker(
                        node_path=node_path, emit=self.emit, presenter=self.presenter, local=self.local, loop=self.loop
                    ),
                    workspace=workspace,
                )
                return await maybe_await(controller.runtime(context))

            return make

        return {name: maker(name, definition) for name, definition in scope.items()}

    def node_emitter(self, node_path: str) -> Callable[[Event], None]:
        def emit(event: Event) -> None:
            self.emit({**event, "node_path": event.get("node_path") or node_path})

        return emit


__all__ = ["ProviderSession"]
