"""rig ls: workflows with their workspaces, recorded snapshots, or the project's configuration.

What the plans say of each workflow is an answer the cache may give (``rigcli/cache/``); the
workspaces are read from the state as it is now, and each one's machines probed live.
"""

from __future__ import annotations

import os

from rigcli.cache.gates import lock_held, open_hooks
from rigcli.cli.output import emit_json
from rigcli.discovery import project_paths
from rigcli.engine.direct_probes import DirectProbes
from rigcli.engine.outdated import outdated_against
from rigcli.errors import UsageError
from rigcli.layout import ssh_alias
from rigcli.render.tables import format_age, format_until, print_kv, print_message, print_table
from rigcli.state.state_file import Error, open_current
from rigcli.state.workspace_file import listed_workspaces

TYPE_CHECKING = False  # not typing's: a remembered listing's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cache.answers import ListingAnswer
    from rigcli.cli.session import Session
    from rigcli.cli.spec import GlobalOptions
    from rigcli.jsonutil import JsonObject
    from rigcli.records import LockHolder

Live = tuple[str, str]  # a workspace's live status: (state, detail)
Record = dict[str, object]  # a workspace as its record's JSON (``WorkspaceRecord.to_json``)

TARGETS = {
    "workspaces": "workspaces",
    "workspace": "workspaces",
    "ws": "workspaces",
    "snapshots": "snapshots",
    "snapshot": "snapshots",
    "config": "config",
}


def ls(session: Session, target: str | None, no_probe: bool = False) -> int:
    kind = TARGETS.get(target or "workspaces")
    if kind is None:
        raise UsageError(f"Unknown ls target {target}. Expected workspaces, snapshots, or config.")
    if kind == "config":
        return _config(session)
    if kind == "snapshots":
        return _snapshots(session)
    # --no-probe asks no daemon anything; it shows what the state holds even when rig_config.py does not load.
    session.config_optional = no_probe
    listing = session.answers.listing(offline=no_probe)
    try:
        return _workspaces(session, listing, probe=not no_probe)
    finally:
        listing.close()


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


def _workspaces(session: Session, listing: ListingAnswer, *, probe: bool) -> int:
    records, state, lock = _state_now(session)
    rows: list[WorkflowRow] = []
    for item in listing.workflows:
        mine = [record for record in records if record["workflow"] == item.name]
        row = WorkflowRow(item.name, mine, cached_node_count=item.cached, node_count=item.nodes)
        row.plan_error = item.plan_error
        if item.finals is not None:
            finals = item.finals
            row.outdated = {str(record["id"]): outdated_against(record["provenance"], finals) for record in mine}
        rows.append(row)
    shown = [record for row in rows for record in row.workspaces]
    live = _live(session, listing, shown) if probe and shown else {} if probe else None
    return show_workspaces(session.opts, rows, live, state, lock)


def _state_now(session: Session) -> tuple[list[Record], tuple[str, str], LockHolder | None]:
    """Every workspace (by name) as its record's JSON, the state's backend and place, and who holds its
    lock: straight from a SQLite file (``state/workspace_file.py``), else through the loaded engine."""
    start = session.answers.start
    path = None if start is None else start.state_path
    if path is not None:
        db = open_current(path)
        records = None
        if db is not None:
            try:
                records = listed_workspaces(db)
            except (Error, ValueError):  # what the store reports on its own terms
                records = None
            finally:
                db.close()
        if records is not None:
            lock = None
            if lock_held(path):
                from rigcli.state.lock import peek_holder

                lock = peek_holder(path)
            return records, ("sqlite", path), lock
    engine = session.engine
    records = [dict(record.to_json()) for record in engine.workspaces.list_workspaces(session.opts.workflow)]
    status = engine.project.state_status()
    return (
        sorted(records, key=lambda record: (str(record["name"]), str(record["workflow"]))),
        (
            status.backend,
            status.url,
        ),
        status.lock,
    )


def _live(session: Session, listing: ListingAnswer, records: list[Record]) -> dict[str, Live]:
    """Each workspace's live status: through the plugins' status hooks when every provider among them has
    one (``engine/direct_probes.py``), else through the loaded engine's controllers."""

    probes = None
    providers = listing.providers
    start = session.answers.start
    if providers is None and listing.definitions and start is not None and start.state_path is not None:
        state_dir = os.path.dirname(start.state_path)
        providers = listing.providers = open_hooks(listing.definitions, checks_as_kept=False, state_dir=state_dir)
    if providers is not None and start is not None:
        ids = [str(row[0]) for row in listing.definitions]
        by_name = {item.name: item for item in listing.workflows}
        scoped = {index for record in records for index in by_name[str(record["workflow"])].scoped}
        probes = DirectProbes.make(providers, ids, scoped, start.project_dir, records)
    if probes is not None:
        probes.start()
        return probes.answers(records)
    engine = session.engine
    known = {record.id: record for record in engine.workspaces.list_workspaces(session.opts.workflow)}
    found = session.run(engine.lifecycle.probe_workspaces([known[str(record["id"])] for record in records]))
    return {record_id: (status.state, status.detail) for record_id, status in found.items()}


def show_workspaces(
    opts: GlobalOptions,
    workflows: list[WorkflowRow],
    live: dict[str, Live] | None,
    state: tuple[str, str],
    lock: LockHolder | None,
) -> int:
    """Write ``rig ls``'s answer (the one writer of both ways): the table, or the ``--json`` document."""
    if opts.json:
        project_dir = project_paths(chdir=opts.chdir, config=opts.config)[1]  # for each workspace's ssh alias
        emit_json(
            {
                "workflows": [item.to_json(live, project_dir) for item in workflows],
                "state": {"backend": state[0], "url": state[1]},
                "lock": None if lock is None else lock.to_json(),
            }
        )
        return 0

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
    snapshots: list[JsonObject] = []
    for name in _workflow_names(session):
        snapshots.extend(session.run(session.engine.cache.list_snapshots(workflow=name)))
    if session.opts.json:
        emit_json({"snapshots": snapshots})
        return 0

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
    info = session.engine.project.info()
    if session.opts.json:
        emit_json(info.to_json())
        return 0

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
