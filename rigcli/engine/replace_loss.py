"""What ``rig fork NAME --replace`` would throw away: each machine's changes since it was made, as its provider tells.

Read-only and before anything runs (no lock, no apply): the CLI shows the answer and asks, or
refuses without ``--yes``. A provider without ``SupportsChanges``, or one that cannot be asked now,
is an answer too (``unknown``, with why): rig cannot tell what would be lost, and says so.
"""

from __future__ import annotations

from rigcli.engine.effects import as_entry
from rigcli.engine.project import Project
from rigcli.engine.providers import maybe_await
from rigcli.engine.reconcile import controller_of
from rigcli.engine.session import ProviderSession
from rigcli.engine.workspaces import CREATED, Workspaces
from rigcli.errors import RigError, describe_exception
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import MachineChange, SupportsChanges
from rigcli.records import EffectRecord
from rigcli.speed.records import lazy_dataclass
from rigcli.state.effects import LIVE_EFFECT_STATUSES


@lazy_dataclass(frozen=True)
class MachineLoss:
    """One machine of the workspace that changed since it was made, or whose provider cannot tell."""

    provider_id: str
    machine: str  # the effect id: the provider's own name for it
    changes: tuple[MachineChange, ...] = ()
    unknown: str | None = None  # why rig cannot tell what changed in it

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "provider_id": self.provider_id,
            "machine": self.machine,
            "changes": [change.to_json() for change in self.changes],
            "unknown": self.unknown,
        }


@lazy_dataclass(frozen=True)
class ReplaceLoss:
    """What replacing workspace ``workspace`` would lose: its machines that changed (or may have)."""

    workspace: str
    machines: tuple[MachineLoss, ...] = ()

    @property
    def nothing_lost(self) -> bool:
        return not self.machines

    @property
    def changes(self) -> list[MachineChange]:
        return [change for machine in self.machines for change in machine.changes]

    def to_json(self) -> dict[str, JsonValue]:
        return {"workspace": self.workspace, "machines": [machine.to_json() for machine in self.machines]}


async def what_replace_loses(
    project: Project, workspaces: Workspaces, name: str, workflow: str | None
) -> ReplaceLoss | None:
    """What replacing workspace ``name`` would lose; None when there is no such workspace (the
    replace is then a plain fork). A create that never completed leaves nothing to lose."""
    selected = workspaces.creating_workflow(workflow)
    record = project.store.get_workspace(name, selected.name)
    if record is None:
        return None
    if record.status not in CREATED:
        return ReplaceLoss(name)
    owned = project.store.list_effects(owner_kind="workspace", owner_id=record.id, statuses=LIVE_EFFECT_STATUSES)
    if not owned:
        return ReplaceLoss(name)
    session = await project.session(selected, "plan")
    losses = [await _machine_loss(session, effect) for effect in owned]
    return ReplaceLoss(name, tuple(loss for loss in losses if loss.changes or loss.unknown is not None))


async def _machine_loss(session: ProviderSession, effect: EffectRecord) -> MachineLoss:
    provider = effect.provider_id
    controller = await controller_of(session, provider)
    if not isinstance(controller, SupportsChanges):
        return MachineLoss(provider, effect.id, unknown=f"the {provider} provider cannot tell what changed in it")
    try:
        answer = await maybe_await(controller.changes(as_entry(effect)))
    except RigError as exc:
        return MachineLoss(provider, effect.id, unknown=str(exc))
    except Exception as exc:  # a provider's bug is no reason to replace blindly: rig says it cannot tell
        return MachineLoss(provider, effect.id, unknown=describe_exception(exc))
    if answer is None:
        return MachineLoss(provider, effect.id, unknown=f"the {provider} provider cannot tell what changed in it")
    return MachineLoss(provider, effect.id, changes=tuple(answer))


__all__ = ["MachineLoss", "ReplaceLoss", "what_replace_loses"]
