"""What the engine returns: plain dataclasses with ``to_json()`` giving DESIGN §6 shapes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from rigcli.jsonutil import JsonValue


@dataclass(frozen=True)
class Reason:
    code: str
    message: str
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail:
            data["detail"] = self.detail
        return data


@dataclass(frozen=True)
class PlanNode:
    index: int  # 1-based, in plan order
    path: str
    name: str
    status: str  # "cached" | "pending"
    reason: Reason
    run_id: str | None
    upstream_run_ids: list[str]
    scope: str = "local"  # "local" | "global"

    def to_json(self) -> dict[str, Any]:
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


@dataclass(frozen=True)
class WorkflowPlan:
    workflow: str
    nodes: list[PlanNode]
    final_context: JsonValue | None  # known only when every node is cached
    provider_checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    @property
    def cached_node_count(self) -> int:
        return sum(1 for node in self.nodes if node.status == "cached")

    def to_json(self) -> dict[str, Any]:
        return {
            "workflow": self.workflow,
            "cached_node_count": self.cached_node_count,
            "node_count": self.node_count,
            "nodes": [node.to_json() for node in self.nodes],
            "final_context": self.final_context,
            "provider_checks": list(self.provider_checks),
        }


@dataclass(frozen=True)
class ApplyResult:
    workflow: str
    context: JsonValue
    plan: WorkflowPlan  # the plan as it stood before the apply ran
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        data = {"workflow": self.workflow, "context": self.context, "plan": self.plan.to_json()}
        if self.dry_run:
            data["dry_run"] = True
        return data


@dataclass(frozen=True)
class NodeRun:
    """One row of the run journal (``workflow_node_runs``)."""

    id: str
    workflow: str
    node_path: str
    node_name: str
    node_kind: str
    node_key: str
    provider_fingerprint: str
    upstream_run_ids: list[str]
    output: JsonValue | None
    artifacts: list[JsonValue]
    status: str  # running | succeeded | failed | interrupted
    invalidated: bool
    created_at: str  # ISO-8601 UTC
    finished_at: str | None = None
    error: str | None = None
    pid: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class WorkspaceRecord(TypedDict, total=False):
    id: str
    name: str
    workflow: str
    workflow_ctx: JsonValue
    ctx: JsonValue
    status: str  # creating | ready | failed | removing
    resources: list[JsonValue]  # machines attached while create ran (effects journal)
    error: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CacheEntry:
    scope: str  # "local" | "global"
    workflow: str  # the store's workflow column: the workflow name or "fragment:<hash>"
    node_path: str
    display_path: str
    node_name: str
    run_id: str
    invalidated: bool
    created_at: str
    status: str  # "cached" | "invalidated" | "running" | "in-doubt" (left running by a dead process)
    fragment_hash: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class NodeExplanation:
    path: str
    name: str
    status: str
    reason: Reason
    run_id: str | None
    scope: str
    cache_ttl: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "status": self.status,
            "reason": self.reason.to_json(),
            "run_id": self.run_id,
            "scope": self.scope,
            "cache_ttl": self.cache_ttl,
        }


@dataclass(frozen=True)
class OperationInfo:
    id: str
    workflow: str
    workspace: bool  # True for workspace operations
    title: str | None
    description: str | None
    input_model: Any  # the pydantic model class, or None
    input_schema: dict[str, Any] | None  # its JSON schema (positions under "x-rig-position")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow": self.workflow,
            "workspace": self.workspace,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True)
class WorkflowSummary:
    name: str
    node_count: int
    creates_workspace: bool
    operations: list[str]
    workspace_operations: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProjectInfo:
    project_dir: str
    config_path: str
    state_path: str
    workflows: list[WorkflowSummary]
    workflow: WorkflowSummary | None  # the only workflow, when there is exactly one

    def to_json(self) -> dict[str, Any]:
        return {
            "project_dir": self.project_dir,
            "config_path": self.config_path,
            "state_path": self.state_path,
            "workflows": [item.to_json() for item in self.workflows],
        }


__all__ = [
    "ApplyResult",
    "CacheEntry",
    "NodeExplanation",
    "NodeRun",
    "OperationInfo",
    "PlanNode",
    "ProjectInfo",
    "Reason",
    "WorkflowPlan",
    "WorkflowSummary",
    "WorkspaceRecord",
]
