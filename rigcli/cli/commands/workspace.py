"""rm and the shared guard for destructive commands."""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import Declined, RigError, UnknownWorkspaceError, UsageError
from rigcli.jsonutil import JsonValue
from rigcli.records import WorkspaceRecord
from rigcli.render.prompts import confirm, multi_select
from rigcli.render.tables import print_message
from rigcli.state.process import this_owner


def confirm_destructive(
    session: Session, question: str, *, yes: bool, command: str, note: str = "", kept: str = "Nothing was changed"
) -> None:
    """Ask in a terminal; elsewhere (or with --json) insist on --yes.

    ``note`` says what is special; a "no" says what was ``kept`` and exits 1 without "error:".
    """
    if yes:
        return
    if not session.opts.interactive:
        why = f" ({note})" if note else ""
        raise RigError(f"{command} requires --yes when not running in an interactive terminal{why}")

    if not confirm(question, default=False):
        raise Declined(kept)


def _others(records: list[WorkspaceRecord]) -> dict[str, str]:
    """Workspace name → owner, for the records someone else (another user@host) created."""

    me = this_owner()
    return {record.name: str(record.owner) for record in records if record.owner not in (None, me)}


def _owner_note(others: dict[str, str]) -> str:
    if len(others) == 1:
        [(name, owner)] = others.items()
        return f"workspace {name} belongs to {owner}"
    return "workspaces of others: " + ", ".join(f"{name} ({owner})" for name, owner in sorted(others.items()))


def _say_whose(session: Session, others: dict[str, str]) -> None:
    if others:
        print_message(f"{_owner_note(others)}; removing {'it' if len(others) == 1 else 'them'}", style="yellow")


def _label(record: WorkspaceRecord, several_workflows: bool) -> str:
    return f"{record.workflow}/{record.name}" if several_workflows else record.name


def _removed(record: WorkspaceRecord) -> dict[str, JsonValue]:
    """A removed workspace as --json reports it: its record as it was, with the status it has now."""
    return {**record.to_json(), "status": "removed"}


def rm(
    session: Session,
    *,
    names: Sequence[str] = (),
    all_: bool = False,
    yes: bool = False,
    force: bool = False,
    missing_ok: bool = False,
    forget: bool = False,
) -> int:
    # The remove hook is the config's: without --forget, one that does not load is the engine's one
    # error line (offering --forget); with it, the warning says the hook is skipped.
    session.config_optional = "rm --forget removes without the remove hook" if forget else ""
    if names and all_:
        raise UsageError("rm accepts either a workspace name or --all, not both")
    if not names and not all_ and not session.opts.interactive:
        raise UsageError("rm needs a workspace name or --all when not running in an interactive terminal")
    if len(names) == 1:
        return _rm_one(session, names[0], yes=yes, force=force, missing_ok=missing_ok, forget=forget)
    if names:
        return _rm_named(
            session, list(dict.fromkeys(names)), yes=yes, force=force, missing_ok=missing_ok, forget=forget
        )
    return _rm_all_or_picked(session, all_=all_, yes=yes, force=force, forget=forget)


def _confirm_removal(session: Session, records: list[WorkspaceRecord], names: list[str], *, yes: bool) -> None:
    """Ask once for every workspace named (saying whose are someone else's), and say so when removing them."""
    others = _others(records)
    note = _owner_note(others) if others else ""
    what = f"workspace {names[0]}" if len(names) == 1 else f"workspaces {', '.join(names)}"
    question = f"Remove {what}" + (f" ({note})?" if note else "?")
    confirm_destructive(session, question, yes=yes, command="rm", note=note, kept=f"Kept {what}")
    _say_whose(session, others)


def _rm_one(session: Session, name: str, *, yes: bool, force: bool, missing_ok: bool, forget: bool) -> int:
    engine = session.engine
    try:
        workflow = session.workspace_workflow(name)
        records = [item for item in engine.workspaces.list_workspaces(workflow) if item.name == name]
        _confirm_removal(session, records, [name], yes=yes)
        with session.watch():
            removed = session.run(
                engine.workspaces.remove_workspace(name=name, workflow=workflow, force=force, forget=forget)
            )
        _forget_host_key(session, name)
    except UnknownWorkspaceError:
        # Another rm may have removed it meanwhile (it is looked up again under the lock).
        if not missing_ok:
            raise
        if session.opts.json:
            emit_json(None)
        return 0
    if session.opts.json:
        emit_json(_removed(removed))
    return 0


def _rm_named(session: Session, names: list[str], *, yes: bool, force: bool, missing_ok: bool, forget: bool) -> int:
    """rm A B C: every name looked up before anything is removed (an unknown one removes none, unless
    --missing-ok), one question, then each removed in turn, a failure not stopping the others."""
    engine = session.engine
    targets: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        try:
            targets[name] = session.workspace_workflow(name)
        except UnknownWorkspaceError:
            if not missing_ok:
                raise
            missing.append(name)
    records = [
        record
        for record in engine.workspaces.list_workspaces(session.workflow_filter())
        if targets.get(record.name) == record.workflow
    ]
    if targets:
        _confirm_removal(session, records, list(targets), yes=yes)
    removed: list[WorkspaceRecord] = []
    failed: list[JsonValue] = []
    with session.watch():
        for name, workflow in targets.items():
            try:
                removed.append(
                    session.run(engine.workspaces.remove_workspace(name, workflow, force=force, forget=forget))
                )
                _forget_host_key(session, name)
            except UnknownWorkspaceError:
                if not missing_ok:
                    raise
                missing.append(name)
            except RigError as exc:
                failed.append({"name": name, "error": str(exc)})
                if not session.opts.json:
                    print_message(f"error: {exc}", style="red")
    if session.opts.json:
        emit_json({"removed": [_removed(record) for record in removed], "missing": missing, "failed": failed})
    return 1 if failed else 0


def _rm_all_or_picked(session: Session, *, all_: bool, yes: bool, force: bool, forget: bool) -> int:
    engine = session.engine
    records = list(engine.workspaces.list_workspaces(session.workflow_filter()))
    several = len({record.workflow for record in records}) > 1
    if records and all_:
        others = _others(records)
        note = _owner_note(others) if others else ""
        question = f"Remove all {len(records)} workspaces" + (f" ({note})?" if note else "?")
        kept = f"Kept all {len(records)} workspaces"
        confirm_destructive(session, question, yes=yes, command="rm --all", note=note, kept=kept)
        _say_whose(session, others)
    elif records:
        options = [(_label(record, several), record.status) for record in records]
        picked = set(multi_select("Select workspaces to remove", options))
        if not picked:
            raise Declined("Nothing selected; kept every workspace")
        records = [record for record in records if _label(record, several) in picked]
    removed_all = []
    with session.watch():
        for record in records:
            removed_all.append(
                session.run(
                    engine.workspaces.remove_workspace(
                        name=record.name, workflow=record.workflow, force=force, forget=forget
                    )
                )
            )
            _forget_host_key(session, record.name)
    if session.opts.json:
        emit_json({"removed": [_removed(record) for record in removed_all]})
    elif not records:
        print_message("no workspaces", style="dim")
    return 0


def _forget_host_key(session: Session, name: str) -> None:
    """The workspace's SSH host key and its known_hosts line go with it (rig ssh-config made them)."""
    from rigcli.connect.hostkeys import remove_host_key

    remove_host_key(str(session.engine.project_dir), name)


__all__ = ["confirm_destructive", "rm"]
