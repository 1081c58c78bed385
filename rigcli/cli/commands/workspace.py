"""rm and the shared guard for destructive commands."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import Declined, RigError, UnknownWorkspaceError, UsageError
from rigcli.records import WorkspaceRecord


def confirm_destructive(
    session: Session, question: str, *, yes: bool, command: str, kept: str = "Nothing was changed"
) -> None:
    """Ask in a terminal; elsewhere (or with --json) insist on --yes. A "no" says what was ``kept`` (exit 1)."""
    if yes:
        return
    if not session.opts.interactive:
        raise RigError(f"{command} requires --yes when not running in an interactive terminal")
    from rigcli.render.prompts import confirm

    if not confirm(question, default=False):
        raise Declined(kept)


def _label(record: WorkspaceRecord, several_workflows: bool) -> str:
    return f"{record['workflow']}/{record['name']}" if several_workflows else str(record["name"])


def rm(
    session: Session,
    name: str | None,
    *,
    all_: bool = False,
    yes: bool = False,
    force: bool = False,
    missing_ok: bool = False,
) -> int:
    if name is not None and all_:
        raise UsageError("rm accepts either a workspace name or --all, not both")
    if name is None and not all_ and not session.opts.interactive:
        raise UsageError("rm needs a workspace name or --all when not running in an interactive terminal")
    engine = session.engine
    if name is not None:
        try:
            workflow = session.workspace_workflow(name)
            confirm_destructive(
                session, f"Remove workspace {name}?", yes=yes, command="rm", kept=f"Kept workspace {name}"
            )
            with session.watch():
                removed = session.run(engine.remove_workspace(name=name, workflow=workflow, force=force))
        except UnknownWorkspaceError:
            # Another rm may have removed it meanwhile (it is looked up again under the lock).
            if not missing_ok:
                raise
            if session.opts.json:
                emit_json(None)
            return 0
        if session.opts.json:
            emit_json(removed)
        return 0
    records = list(engine.list_workspaces(session.workflow_filter()))
    several = len({record["workflow"] for record in records}) > 1
    if records and all_:
        kept = f"Kept all {len(records)} workspaces"
        confirm_destructive(session, f"Remove all {len(records)} workspaces?", yes=yes, command="rm --all", kept=kept)
    elif records:
        from rigcli.render.prompts import multi_select

        options = [(_label(record, several), str(record.get("status") or "")) for record in records]
        picked = set(multi_select("Select workspaces to remove", options))
        if not picked:
            raise Declined("Nothing selected; kept every workspace")
        records = [record for record in records if _label(record, several) in picked]
    removed_all = []
    with session.watch():
        for record in records:
            removed_all.append(
                session.run(engine.remove_workspace(name=record["name"], workflow=record["workflow"], force=force))
            )
    if session.opts.json:
        emit_json({"removed": removed_all})
    elif not records:
        from rigcli.render.tables import print_message

        print_message("no workspaces", style="dim")
    return 0


__all__ = ["confirm_destructive", "rm"]
