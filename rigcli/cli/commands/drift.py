"""rig diff and rig reap: why a workspace is outdated, and expiry on demand."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.render.tables import print_message, print_table


def diff(session: Session, name: str) -> int:
    """The tasks the workflow would now run differently for workspace ``name``, and why (exit 0 either way)."""
    engine = session.engine
    result = session.run(engine.drift.diff(name, session.workflow_filter()))
    if session.opts.json:
        emit_json(result.to_json())
        return 0

    if not result.outdated:
        print_message(f"{result.workspace} is up to date: the workflow would make it from the same runs.", err=False)
        return 0
    rows = [
        [change.path, change.reason.code, change.reason.detail or change.reason.message] for change in result.changes
    ]
    count = len(result.changes)
    noun = "task differs" if count == 1 else "tasks differ"
    print_table(
        ["task", "reason", "detail"],
        rows,
        empty="no task differs",
        title=f"{result.workspace} is outdated: {count} {noun}",
    )
    print_message(f"rig fork {result.workspace} --replace remakes it from the current snapshot", style="dim", err=False)
    return 0


def reap(session: Session, *, dry_run: bool = False) -> int:
    """Remove expired workspaces and stop idle ones now; exit 1 when one could not be."""
    session.reap_on_load = False  # this command reaps itself, and reports what it did
    engine = session.engine
    with session.watch():
        report = session.run(engine.reaper.reap(dry_run=dry_run))
    if session.opts.json:
        emit_json(report.to_json())
        return 1 if report.failed else 0

    rows = [[item.workspace, item.action, item.reason, item.detail] for item in report.reaped]
    title = "would reap (dry run)" if dry_run and rows else None
    print_table(["workspace", "action", "reason", "detail"], rows, empty="nothing to reap", title=title)
    for item in report.failed:
        print_message(
            f"{item.workspace}: could not {item.action} it: {item.error}; it is marked reap-failed", style="red"
        )
    return 1 if report.failed else 0


__all__ = ["diff", "reap"]
