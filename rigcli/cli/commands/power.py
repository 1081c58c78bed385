"""rig stop WS... | --all and rig start WS... | --all: a workspace's machines stopped (files kept) or started again."""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import RigError, UnsupportedError, UsageError
from rigcli.jsonutil import JsonValue
from rigcli.render.tables import print_message


def stop(session: Session, *, names: Sequence[str] = (), all_: bool = False) -> int:
    return _power(session, names, all_, stop=True)


def start(session: Session, *, names: Sequence[str] = (), all_: bool = False) -> int:
    return _power(session, names, all_, stop=False)


def _power(session: Session, names: Sequence[str], all_: bool, *, stop: bool) -> int:
    verb, done = ("stop", "stopped") if stop else ("start", "started")
    if names and all_:
        raise UsageError(f"{verb} accepts workspace names or --all, not both")
    if not names and not all_:
        raise UsageError(f"{verb} needs workspace names or --all")
    engine = session.engine
    if all_:
        targets = [
            (record.name, record.workflow) for record in engine.workspaces.list_workspaces(session.workflow_filter())
        ]
    else:
        targets = [(name, session.workspace_workflow(name)) for name in dict.fromkeys(names)]

    results: list[JsonValue] = []
    skipped: list[str] = []
    failed: list[RigError] = []
    for name, workflow in targets:
        try:
            change = (
                engine.lifecycle.set_power(name, workflow, stop=True)
                if stop
                else engine.lifecycle.set_power(name, workflow, stop=False)
            )
            live = session.run(change)
        except UnsupportedError as exc:
            if not all_:
                raise
            skipped.append(str(exc))
            continue
        except RigError as exc:
            if len(targets) == 1:
                raise
            failed.append(exc)
            if not session.opts.json:
                print_message(f"error: {exc}", style="red")
            continue
        results.append({"name": name, "workflow": workflow, "live": live.to_json()})
        if not session.opts.json:
            expected = "stopped" if stop else "running"
            shown = "" if live.state == expected else f" (now {live.state}{f': {live.detail}' if live.detail else ''})"
            print_message(f"{done} {name}{shown}", style="" if not shown else "yellow")
    if all_ and not results and skipped:
        raise UnsupportedError(skipped[0] if len(skipped) == 1 else f"{skipped[0]} (and {len(skipped) - 1} more)")
    if session.opts.json:
        emit_json({done: results, "failed": [str(exc) for exc in failed]})
    elif not targets:
        print_message("no workspaces", style="dim")
    for reason in skipped if not session.opts.json else []:
        print_message(f"skipped: {reason}", style="dim")
    return 1 if failed else 0


__all__ = ["start", "stop"]
