"""What the engine returns: plain dataclasses with ``to_json()`` giving DESIGN §6 shapes.

Records shared with the state store (runs, workspaces, reasons) live in ``rigcli.records``.
"""

from __future__ import annotations

from dataclasses import asdict, field

from rigcli.jsonutil import JsonValue
from rigcli.provider_api import ProviderDiagnosis
from rigcli.records import EffectRecord, Reason
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import CacheEntryStatus, PlanStatus

JsonObject = dict[str, JsonValue]


@lazy_dataclass(frozen=True, eq=False)
class PlanNode:
    """One task in a plan: cached or pending, and why."""

    index: int  # 1-based, in plan order
    path: str
    name: str
    status: PlanStatus
    reason: Reason
    run_id: str | None
    upstream_run_ids: list[str]
    scope: str = "local"  # "local" | "global"

    def to_json(self) -> JsonObject:
        return {
            "index": self.index,
            "path": self.path,
            "name": self.name,
            "status": self.status,
            "reason": self.reason.to_json(),
            "run_id": self.run_id,
            "upstream_run_ids": list(self.upstream_run_ids),
            "scope": self.scope,
        }


@lazy_dataclass(frozen=True, eq=False)
class WorkflowPlan:
    """A workflow's plan: its nodes in order, and the final context when all are cached."""

    workflow: str
    nodes: list[PlanNode]
    final_context: JsonValue | None  # known only when every node is cached
    provider_checks: list[JsonObject] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    @property
    def cached_node_count(self) -> int:
        return sum(1 for node in self.nodes if node.status == "cached")

    def to_json(self) -> JsonObject:
        return {
            "workflow": self.workflow,
            "cached_node_count": self.cached_node_count,
            "node_count": self.node_count,
            "nodes": [node.to_json() for node in self.nodes],
            "final_context": self.final_context,
            "provider_checks": list[JsonValue](self.provider_checks),
        }


@lazy_dataclass(frozen=True, eq=False)
class ApplyResult:
    """What an apply produced: the final context and the plan it started from."""

    workflow: str
    context: JsonValue
    plan: WorkflowPlan  # the plan as it stood before the apply ran
    dry_run: bool = False
    runs: dict[int, str] = field(default_factory=dict)  # the run each task's output came from (by task index)
    only: tuple[str, ...] = ()  # ``--only``: the paths of the tasks it named
    skipped: tuple[str, ...] = ()  # ``--only``: the paths of the tasks left pending because of it

    def to_json(self) -> JsonObject:
        data: JsonObject = {"workflow": self.workflow, "context": self.context, "plan": self.plan.to_json()}
        if self.dry_run:
            data["dry_run"] = True
        if self.only:
            data["only"] = list(self.only)
            data["skipped"] = list(self.skipped)
        return data


@lazy_dataclass(frozen=True, eq=False)
class CacheEntry:
    """One recorded run, as ``rig cache ls`` lists it."""

    scope: str  # "local" | "global"
    workflow: str  # the store's workflow column: the workflow name or "fragment:<hash>"
    node_path: str
    display_path: str
    node_name: str
    run_id: str
    invalidated: bool
    created_at: str
    status: CacheEntryStatus  # in-doubt: left running by a process that is gone
    fragment_hash: str | None = None

    def to_json(self) -> JsonObject:
        return asdict(self)


@lazy_dataclass(frozen=True, eq=False)
class NodeExplanation:
    """Why one task is cached or pending, as ``rig cache explain`` shows it."""

    path: str
    name: str
    status: PlanStatus
    reason: Reason
    run_id: str | None
    scope: str
    cache_ttl: float | None = None

    def to_json(self) -> JsonObject:
        return {
            "path": self.path,
            "name": self.name,
            "status": self.status,
            "reason": self.reason.to_json(),
            "run_id": self.run_id,
            "scope": self.scope,
            "cache_ttl": self.cache_ttl,
        }


@lazy_dataclass(frozen=True, eq=False)
class OperationInfo:
    """An operation as the CLI sees it: id, help text and its input's model and schema."""

    id: str
    workflow: str
    workspace: bool  # True for workspace operations
    title: str | None
    description: str | None
    input_model: type | None  # the pydantic model class
    input_schema: JsonObject | None  # its JSON schema (positions under "x-rig-position")

    def to_json(self) -> JsonObject:
        return {
            "id": self.id,
            "workflow": self.workflow,
            "workspace": self.workspace,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@lazy_dataclass(frozen=True, eq=False)
class WorkflowSummary:
    """A workflow's name, size, workspace support and operations."""

    name: str
    node_count: int
    creates_workspace: bool
    operations: list[str]
    workspace_operations: list[str]

    def to_json(self) -> JsonObject:
        return asdict(self)


@lazy_dataclass(frozen=True, eq=False)
class ProjectInfo:
    """Where a project's config and state are, and its workflows."""

    project_dir: str
    config_path: str
    state_path: str
    workflows: list[WorkflowSummary]
    workflow: WorkflowSummary | None  # the only workflow, when there is exactly one

    def to_json(self) -> JsonObject:
        return {
            "project_dir": self.project_dir,
            "config_path": self.config_path,
            "state_path": self.state_path,
            "workflows": [item.to_json() for item in self.workflows],
        }


@lazy_dataclass(frozen=True, eq=False)
class GcItem:
    """One machine, snapshot, container or image ``rig gc`` looked at."""

    provider_id: str
    kind: str
    id: str
    resource: JsonObject
    journaled: bool  # in the effects journal, or only found by its provider's marks
    reason: str | None = None  # why it was kept, or why removing it failed

    @classmethod
    def of(cls, effect: EffectRecord, journaled: bool, reason: str | None) -> GcItem:
        return cls(effect.provider_id, effect.kind, effect.id, dict(effect.resource), journaled, reason)

    def to_json(self) -> JsonObject:
        data: JsonObject = asdict(self)
        return data


@lazy_dataclass
class GcReport:
    """What ``rig gc`` removed (or, with ``dry_run``, would remove), kept and could not remove."""

    dry_run: bool
    forgetting: bool = False  # --forget-unreachable: unknowable removals are forgotten, not failures
    removed: list[GcItem] = field(default_factory=list)
    kept: list[GcItem] = field(default_factory=list)
    failed: list[GcItem] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)  # providers that could not list what they made
    # With --forget-unreachable: journal entries no provider can be asked about, marked forgotten.
    forgotten: list[GcItem] = field(default_factory=list)
    # Kept because where they are kept refuses deletions (a registry without deletes): a warning, not a failure.
    refused: list[GcItem] = field(default_factory=list)
    dropped: int = 0  # journal rows of removed resources dropped
    skipped: str | None = None  # what could not be judged (rig_config.py does not load), said once

    def to_json(self) -> JsonObject:
        return {
            "dry_run": self.dry_run,
            "removed": [item.to_json() for item in self.removed],
            "kept": [item.to_json() for item in self.kept],
            "failed": [item.to_json() for item in self.failed],
            "unreachable": list(self.unreachable),
            "forgotten": [item.to_json() for item in self.forgotten],
            "refused": [item.to_json() for item in self.refused],
            **({"skipped": self.skipped} if self.skipped is not None else {}),
        }

    def warnings(self) -> list[str]:
        """One line per place that refused deletions, with how many things it kept."""
        counts: dict[str, int] = {}
        for item in self.refused:
            counts[item.reason or ""] = counts.get(item.reason or "", 0) + 1
        return [
            f"{reason}; {count} unreferenced {'item' if count == 1 else 'items'} kept"
            for reason, count in counts.items()
        ]


@lazy_dataclass(frozen=True)
class ConfiguredProvider:
    """One provider definition of the project (by its scope name) and what its plugin says of it."""

    name: str
    provider_id: str
    diagnosis: ProviderDiagnosis


@lazy_dataclass(frozen=True)
class ProjectDiagnosis:
    """The project as ``rig doctor`` shows it."""

    project_dir: str
    config_path: str
    state: dict[str, JsonValue]  # StateStatus.to_json(), or backend, url and the error
    providers: list[ConfiguredProvider] = field(default_factory=list)
    providers_error: str | None = None  # why the project's providers could not be read
    config_error: str | None = None  # rig_config.py failed to load: its file:line and error


__all__ = [
    "ApplyResult",
    "CacheEntry",
    "ConfiguredProvider",
    "GcItem",
    "GcReport",
    "JsonObject",
    "NodeExplanation",
    "OperationInfo",
    "PlanNode",
    "ProjectDiagnosis",
    "ProjectInfo",
    "WorkflowPlan",
    "WorkflowSummary",
]
