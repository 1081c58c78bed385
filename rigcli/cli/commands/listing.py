"""rig ls: workflows with their workspaces, recorded snapshots, or the project's configuration.

Workspaces are most often listed without loading the config (``lean_ls.py``: from what the last
full ``rig ls`` planned, while everything its plans read is unchanged); both ways write with
``show_workspaces``.
"""

from __future__ import annotations

from rigcli.cli.spec import GlobalOptions
from rigcli.errors import RigError, UsageError
from rigcli.layout import ssh_alias

# Not typing.TYPE_CHECKING: the lean path writes with this module and imports no typing, nor the
# records' classes (a workspace is its record's JSON here); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from rigcli.cli.session import Session
    from rigcli.jsonutil import JsonObject
    from rigcli.records import LockHolder, WorkspaceRecord

Live = tuple[str, str]  # a workspace's live status: (state, detail)

TARGETS = {
    "workspaces": "workspaces",
    "workspace": "workspaces",
    "ws": "workspaces",
    "snapshots": "snapshots",
    "snapshot": "snapshots",
    "config": "config",
}


def ls(opts: GlobalOptions, target: str | None, no_probe: bool = False) -> int:
    kind = TARGETS.get(target or "workspaces")
    if kind is None:
        raise UsageError(f"Unknown ls target {target}. Expected workspaces, snapshots, or config.")
    if kind == "workspaces" and not opts.json_stream:
        from rigcli.cli.commands.lean_ls import list_lean

        code = list_lean(opts, probe=not no_probe)
        if code is not None:
            return code
    from rigcli.cli.session import Session

    with Session(opts) as session:
        if kind == "config":
            return _config(session)
        if kind == "snapshots":
            return _snapshots(session)
        return _workspaces(session, probe=not no_probe)


def _workflow_names(session: Session) -> list[str]:
    only = session.workflow_filter()
    return [only] if only is not None else session.workflow_names()


class WorkflowRow:
    """One workflow in `rig ls`: its cache summary (None when the plan failed) and its workspaces,
    each as its record's JSON (``WorkspaceRecord.to_json``), by name."""

    __slots__ = ("cached_node_count", "name", "node_count", "outdated", "plan_error", "workspaces")

    def __init__(
        self,
        name: str,
        workspaces: list[dict[str, object]],
        cached_node_count: int | None = None,
        node_count: int | None = None,
    ) -> None:
        self.name = name
        self.workspaces = workspaces
        self.cached_node_count = cached_node_count
        self.node_count = node_count
        self.plan_error: str | None = None
        self.outdated: dict[str, bool | None] = {}  # by record id; None: cannot tell

    def to_json(self, live: dict[str, Live] | None, project_dir: str = "") -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "cached_node_count": self.cached_node_count,
            "node_count": self.node_count,
        }
        if self.plan_error is not None:
            data["plan_error"] = self.plan_error
        data["workspaces"] = [
            {
                **record,
                "outdated": self.outdated.get(str(record["id"])),
                "live": None if live is None else _live_json(live[str(record["id"])]),
                "ssh": ssh_alias(str(record["name"]), project_dir) if project_dir else None,
                "ports": _ports(record),
            }
            for record in self.workspaces
        ]
        return data

    @property
    def cached_cell(self) -> str:
        return "unavailable" if self.node_count is None else f"{self.cached_node_count}/{self.node_count}"


def _ports(record: dict[str, object]) -> object:
    """The ports its workspace() declared when it was made (kept in its provenance by fork)."""
    provenance = record.get("provenance")
    return provenance.get("ports", []) if isinstance(provenance, dict) else []


def _live_json(live: Live) -> dict[str, object]:
    return {"state": live[0], "detail": live[1]}  # LiveStatus.to_json


def _live_cell(live: dict[str, Live] | None, record: dict[str, object]) -> str:
    if live is None:
        return "-"
    state, detail = live[str(record["id"])]
    return state if state == "running" or not detail else f"{state} ({detail})"


def _workspaces(session: Session, *, probe: bool) -> int:
    engine = session.engine
    names = _workflow_names(session)
    workflows: list[WorkflowRow] = []
    records: list[WorkspaceRecord] = []
    planned = True
    for name in names:
        mine = sorted(engine.list_workspaces(name), key=lambda record: record.name)
        records.extend(mine)
        row = WorkflowRow(name, [dict(record.to_json()) for record in mine])
        try:
            plan = session.run(engine.plan_listed(name))
            row.cached_node_count, row.node_count = plan.cached_node_count, plan.node_count
            row.outdated = {record.id: engine.workspace_outdated(record, plan) for record in mine}
        except RigError as exc:
            row.plan_error = str(exc)
            planned = False
        workflows.append(row)
    if planned and session.opts.workflow is None:
        engine.remember_listed(names)  # for the next rig ls to answer without the config (lean_ls.py)
    # Every workspace's providers asked at once, in parallel, for at most PROBE_SECONDS (engine/liveness.py).
    live: dict[str, Live] | None = None
    if probe:
        found = session.run(engine.probe_workspaces(records)) if records else {}
        live = {record_id: (status.state, status.detail) for record_id, status in found.items()}
    status = engine.state_status()
    return show_workspaces(session.opts, workflows, live, (status.backend, status.url), status.lock)


def show_workspaces(
    opts: GlobalOptions,
    workflows: list[WorkflowRow],
    live: dict[str, Live] | None,
    state: tuple[str, str],
    lock: LockHolder | None,
) -> int:
    """Write ``rig ls``'s answer (the one writer of both ways): the table, or the ``--json`` document."""
    if opts.json:
        from rigcli.cli.output import emit_json
        from rigcli.discovery import project_paths

        project_dir = project_paths(chdir=opts.chdir, config=opts.config)[1]  # for each workspace's ssh alias
        emit_json(
            {
                "workflows": [item.to_json(live, project_dir) for item in workflows],
                "state": {"backend": state[0], "url": state[1]},
                "lock": None if lock is None else lock.to_json(),
            }
        )
        return 0
    from rigcli.render.tables import format_age, format_until, print_message, print_table

    print_table(
        ["workflow", "cached", "workspaces"],
        [[item.name, item.cached_cell, len(item.workspaces)] for item in workflows],
        empty="no workflows",
    )
    several = len(workflows) > 1
    rows = []
    for item in workflows:
        for record in item.workspaces:
            owner = record["owner"] or "-"
            outdated = item.outdated.get(str(record["id"]))
            snapshot = "-" if outdated is None else "outdated" if outdated else "current"
            cells = [
                record["name"],
                record["status"],
                owner,
                format_age(record["created_at"]),
                snapshot,  # day two: outdated and expiry, after the columns scripts already read
                format_until(record["expires_at"]),
                _live_cell(live, record),
            ]
            rows.append([*cells[:1], item.name, *cells[1:]] if several else cells)
    columns = ["workspace", "status", "owner", "created", "snapshot", "expires", "live"]
    print_table([*columns[:1], "workflow", *columns[1:]] if several else columns, rows, empty="no workspaces")
    if lock is not None:
        from rigcli.records import describe_holder

        print_message(f"state locked by {describe_holder(lock)}", style="yellow")
    for item in workflows:
        if item.plan_error:
            print_message(f"{item.name}: {item.plan_error}", style="yellow")
        for record in item.workspaces:
            if record["status"] == "reap-failed" and record["error"]:
                print_message(f"{record['name']}: reap failed: {record['error']}", style="yellow")
        if any(item.outdated.get(str(record["id"])) for record in item.workspaces):
            print_message("rig diff WORKSPACE says what changed; rig fork WORKSPACE --replace remakes it", style="dim")
    return 0


def _snapshots(session: Session) -> int:
    from rigcli.cli.output import emit_json

    snapshots: list[JsonObject] = []
    for name in _workflow_names(session):
        snapshots.extend(session.run(session.engine.list_snapshots(workflow=name)))
    if session.opts.json:
        emit_json({"snapshots": snapshots})
        return 0
    from rigcli.render.tables import format_age, print_table

    rows = []
    for item in snapshots:
        nested = item.get("artifact")
        artifact: JsonObject = nested if isinstance(nested, dict) else item
        kind = f"{artifact.get('provider', '')}:{artifact.get('kind', '')}"
        ref = next((str(value) for key, value in artifact.items() if key not in ("provider", "kind")), "")
        rows.append([item.get("workflow"), item.get("node_path"), kind, ref, format_age(item.get("created_at"))])
    print_table(["workflow", "node", "artifact", "ref", "created"], rows, empty="no snapshots")
    return 0


def _config(session: Session) -> int:
    from rigcli.cli.output import emit_json

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


__all__ = ["TARGETS", "WorkflowRow", "ls", "show_workspaces"]
