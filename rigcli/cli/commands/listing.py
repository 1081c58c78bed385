"""rig ls: workflows with their workspaces, recorded snapshots, or the project's configuration."""

from __future__ import annotations

from typing import Any

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import RigError, UsageError

TARGETS = {
    "workspaces": "workspaces",
    "workspace": "workspaces",
    "ws": "workspaces",
    "snapshots": "snapshots",
    "snapshot": "snapshots",
    "config": "config",
}


def ls(session: Session, target: str | None) -> int:
    kind = TARGETS.get(target or "workspaces")
    if kind is None:
        raise UsageError(f"Unknown ls target {target}. Expected workspaces, snapshots, or config.")
    if kind == "config":
        return _config(session)
    if kind == "snapshots":
        return _snapshots(session)
    return _workspaces(session)


def _workflow_names(session: Session) -> list[str]:
    only = session.workflow_filter()
    return [only] if only is not None else session.workflow_names()


def _workspaces(session: Session) -> int:
    engine = session.engine
    workflows: list[dict[str, Any]] = []
    for name in _workflow_names(session):
        entry: dict[str, Any] = {"name": name, "cached_node_count": None, "node_count": None}
        try:
            plan = session.run(engine.plan(workflow=name))
            entry["cached_node_count"], entry["node_count"] = plan.cached_node_count, plan.node_count
        except RigError as exc:
            entry["plan_error"] = str(exc)
        entry["workspaces"] = sorted(engine.list_workspaces(name), key=lambda record: str(record.get("name")))
        workflows.append(entry)
    if session.opts.json:
        emit_json({"workflows": workflows})
        return 0
    from rigcli.render.tables import format_age, print_message, print_table

    print_table(
        ["workflow", "cached", "workspaces"],
        [[item["name"], _cached_cell(item), len(item["workspaces"])] for item in workflows],
        empty="no workflows",
    )
    several = len(workflows) > 1
    rows = []
    for item in workflows:
        for record in item["workspaces"]:
            row = [record.get("name"), record.get("status"), format_age(record.get("created_at"))]
            rows.append([*row[:1], item["name"], *row[1:]] if several else row)
    columns = ["workspace", "workflow", "status", "created"] if several else ["workspace", "status", "created"]
    print_table(columns, rows, empty="no workspaces")
    for item in workflows:
        if item.get("plan_error"):
            print_message(f"{item['name']}: {item['plan_error']}", style="yellow")
    return 0


def _cached_cell(item: dict[str, Any]) -> str:
    if item["node_count"] is None:
        return "unavailable"
    return f"{item['cached_node_count']}/{item['node_count']}"


def _snapshots(session: Session) -> int:
    snapshots: list[dict[str, Any]] = []
    for name in _workflow_names(session):
        snapshots.extend(session.run(session.engine.list_snapshots(workflow=name)))
    if session.opts.json:
        emit_json({"snapshots": snapshots})
        return 0
    from rigcli.render.tables import format_age, print_table

    rows = []
    for item in snapshots:
        nested = item.get("artifact")
        artifact: dict[str, Any] = nested if isinstance(nested, dict) else item
        kind = f"{artifact.get('provider', '')}:{artifact.get('kind', '')}"
        ref = next((str(value) for key, value in artifact.items() if key not in ("provider", "kind")), "")
        rows.append([item.get("workflow"), item.get("node_path"), kind, ref, format_age(item.get("created_at"))])
    print_table(["workflow", "node", "artifact", "ref", "created"], rows, empty="no snapshots")
    return 0


def _config(session: Session) -> int:
    info = session.engine.get_project_info()
    if session.opts.json:
        emit_json(info.to_json())
        return 0
    from rigcli.render.tables import print_kv, print_table

    print_kv([("project", info.project_dir), ("config", info.config_path), ("state", info.state_path)])
    rows = [
        [
            item.name,
            item.node_count,
            "yes" if item.creates_workspace else "no",
            ", ".join(item.workspace_operations),
            ", ".join(item.operations),
        ]
        for item in info.workflows
    ]
    print_table(["workflow", "nodes", "workspaces", "workspace ops", "operations"], rows, empty="no workflows")
    return 0


__all__ = ["TARGETS", "ls"]
