"""rig cache: list entries, explain why tasks are cached or pending, invalidate and clear."""

from __future__ import annotations

from rigcli.cli.commands import gc as gc_commands
from rigcli.cli.commands.workspace import confirm_destructive
from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import Declined, UsageError
from rigcli.render.lines import glyphs
from rigcli.render.prompts import multi_select
from rigcli.render.tables import format_age, print_message, print_table
from rigcli.run_ids import short_run_id


def _plural(count: int) -> str:
    return "entry" if count == 1 else "entries"


def cache_ls(session: Session) -> int:
    engine = session.engine
    entries = session.with_workflow(lambda workflow: session.run(engine.cache.list_cache(workflow=workflow)))
    if session.opts.json:
        emit_json({"entries": [entry.to_json() for entry in entries]})
        return 0

    rows = [
        [
            index,
            entry.status,
            entry.display_path or entry.node_path,
            entry.scope,
            short_run_id(entry.run_id),
            format_age(entry.created_at),
        ]
        for index, entry in enumerate(entries, start=1)
    ]
    print_table(["#", "status", "node", "scope", "run", "created"], rows, empty="no cache entries")
    return 0


def explain(session: Session, task: str | None) -> int:
    workflow = session.workflow()  # the output names it
    explanations = session.run(session.engine.cache.explain(workflow=workflow, task=task))
    if session.opts.json:
        emit_json({"workflow": workflow, "explanations": [item.to_json() for item in explanations]})
        return 0

    rows = [
        [index, item.status, item.path, item.reason.message or item.reason.code]
        for index, item in enumerate(explanations, start=1)
    ]
    print_table(["#", "status", "node", "reason"], rows, empty="no cache tasks", title=workflow)
    return 0


def invalidate(
    session: Session, task: str | None, *, all_: bool = False, yes: bool = False, collect: bool = False
) -> int:
    if task is not None and all_:
        raise UsageError("cache invalidate accepts either a task or --all, not both")
    if task is None and not all_ and not session.opts.interactive:
        raise UsageError("cache invalidate needs a task name or --all when not running in an interactive terminal")
    workflow = session.workflow()
    engine = session.engine
    if all_:
        confirm_destructive(
            session,
            f"Invalidate every cached task in workflow {workflow}?",
            yes=yes,
            command="cache invalidate --all",
            kept=f"Kept the cache of workflow {workflow}",
        )
        count = session.run(engine.cache.invalidate(workflow=workflow, all=True))
    elif task is not None:
        count = session.run(engine.cache.invalidate(workflow=workflow, task=task))
    else:
        count = _pick_and_invalidate(session, workflow)
    collected = gc_commands.offer(session, requested=collect)  # what the invalidated runs orphaned
    if session.opts.json:
        emit_json({"invalidated": count, **({"gc": collected.to_json()} if collected else {})})
        return 0

    if count:
        print_message(f"{glyphs().ok} invalidated {count} cache {_plural(count)}", style="green")
    else:
        print_message("no cache entries invalidated", style="dim")
    if collected is not None:
        gc_commands.show(collected)
    return 0


def _pick_and_invalidate(session: Session, workflow: str) -> int:
    entries = [
        entry for entry in session.run(session.engine.cache.list_cache(workflow=workflow)) if entry.status == "cached"
    ]
    options = list(dict.fromkeys((entry.display_path or entry.node_path, entry.scope) for entry in entries))
    if not options:
        return 0
    picked = multi_select("Select tasks to invalidate", options)
    if not picked:
        raise Declined("Nothing selected; nothing was invalidated")
    return sum(session.run(session.engine.cache.invalidate(workflow=workflow, task=path)) for path in picked)


_CLEARED = {"all": "every cached run", "local": "this project's cached runs", "global": "the global fragments' runs"}


def clear(
    session: Session, *, local: bool = False, global_: bool = False, yes: bool = False, collect: bool = False
) -> int:
    if local and global_:
        raise UsageError("Choose --local or --global, not both")
    scope = "local" if local else "global" if global_ else "all"
    workflow = session.workflow()
    # As destructive as invalidate --all (more: the runs are gone), so it asks the same way.
    confirm_destructive(
        session,
        f"Delete {_CLEARED[scope]} of workflow {workflow}?",
        yes=yes,
        command="cache clear",
        kept=f"Kept the cache of workflow {workflow}",
    )
    count = session.run(session.engine.cache.clear_cache(workflow=workflow, scope=scope))
    collected = gc_commands.offer(session, requested=collect)  # the machines and snapshots the runs held
    if session.opts.json:
        emit_json({"deleted": count, **({"gc": collected.to_json()} if collected else {})})
        return 0

    print_message(f"Cleared {count} cache {_plural(count)}.")
    if collected is not None:
        gc_commands.show(collected)
    return 0


__all__ = ["cache_ls", "clear", "explain", "invalidate"]
