"""``rig plan`` and ``rig graph`` without the config or the engine: the last full plan, while its inputs read the same.

A plan is a function of its inputs, and the full way keeps them as ``rig ls`` does
(``engine/listing_memo.py``, read back with ``speed/listing_memo.py:Listed``): the project's
files, the run journal's stamp, the clock (a ``cache_ttl`` that runs out), the environment, each
provider definition in the workflow's scopes (resolved again, its plugin and checks asked through
``SupportsDirectStatus``) and each artifact the plan validated. With the plan's JSON document
beside them, this prints what the full way would: the same document through ``emit_json``, or
the same table through ``render/tables.py:print_plan``; with the graph's groups and edges kept
beside it, ``rig graph`` draws it through ``render/graph.py``. Anything else — the lock held (the plan
would name who runs what), a workspace due to expire (every command that opens the state reaps),
a workflow the memo is not for, ``--json-stream`` (its events) — returns None before a byte is
written, and the full way runs.
"""

from __future__ import annotations

import time

from rigcli.cli.spec import GlobalOptions

# Not typing.TYPE_CHECKING: this path imports no typing (lean_ls.py says why); mypy treats any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from rigcli.jsonutil import JsonObject
    from rigcli.render.drawing import Drawing
    from rigcli.speed.listing_memo import Listed


def plan_lean(opts: GlobalOptions, *, detailed_exitcode: bool) -> int | None:
    """Print ``rig plan``'s answer and return its exit code, or print nothing and return None."""
    current = _current_plan(opts)
    if current is None:
        return None
    document, section = current
    hint = section.get("hint")
    if not (hint is None or isinstance(hint, str)):
        return None
    pending = document.get("cached_node_count") != document.get("node_count")
    if opts.json:
        from rigcli.cli.output import emit_json

        emit_json(document)
    else:
        from rigcli.render.tables import print_message, print_plan

        print_plan(document)
        if pending and hint:
            print_message(hint, style="dim", err=False)
    return 2 if detailed_exitcode and pending else 0


def drawing_lean(opts: GlobalOptions) -> Drawing | None:
    """What ``rig graph`` draws, read back from the plan ``rig plan`` kept with the workflow's groups
    and edges, while it is current; else None."""
    current = _current_plan(opts)
    if current is None:
        return None
    document, section = current
    from rigcli.render.drawing import Drawing

    kept = {
        "workflow": document.get("workflow"),
        "nodes": document.get("nodes"),
        "edges": section.get("edges"),
        "layout": section.get("layout"),
    }
    try:  # read back from the memo: checked as it is read
        return Drawing(kept)
    except (KeyError, TypeError, ValueError):
        return None


def _current_plan(opts: GlobalOptions) -> tuple[JsonObject, dict[str, object]] | None:
    """The plan's JSON document and the ``plan`` section of the project's memo that holds it, when every
    input the plan read reads the same now."""
    from rigcli._version import __version__
    from rigcli.cli.commands.lean_ls import lock_held
    from rigcli.cli.commands.lean_start import lean_start
    from rigcli.speed.listing_memo import PLAN_SECTION, Listed, environment_stamp
    from rigcli.speed.task_names import recall_section

    start = lean_start(opts)
    if start is None or lock_held(start.state_path):
        return None
    section = recall_section(start.cache_dir, version=__version__, config_path=start.config_path, section=PLAN_SECTION)
    document = section.get("document") if isinstance(section, dict) else None
    if not isinstance(section, dict) or not isinstance(document, dict):
        return None
    listed = Listed.read(section.get("gates"))
    if listed is None or len(listed.workflows) != 1:
        return None
    if opts.workflow != listed.workflows[0] and not (opts.workflow is None and section.get("sole") is True):
        return None
    if listed.until is not None and time.time() >= listed.until:
        return None
    if listed.environment != environment_stamp() or not _journal_as_planned(start.state_path, listed.state):
        return None
    if not _providers_as_planned(listed):
        return None
    return document, section


def _journal_as_planned(state_path: str, stamp: list[object]) -> bool:
    """Whether the run journal reads as the plan read it, with no workspace due to expire."""
    from rigcli.state.state_file import journal_as_read, open_current

    db = open_current(state_path)
    if db is None:
        return False
    try:
        return journal_as_read(db, stamp)
    finally:
        db.close()


def _providers_as_planned(listed: Listed) -> bool:
    """Whether each provider definition resolves, loads and checks as it did, and each artifact the plan
    validated is valid (or not) as it was then."""
    from rigcli.cli.commands.lean_ls import definitions_now

    daemons = definitions_now(listed)
    if daemons is None:
        return False
    try:
        return all(daemons[index].validate_artifact(ref) is valid for index, ref, valid in listed.validations)
    except Exception:  # a provider that fails to answer: the full way says so, in its words
        return False
    finally:
        for daemon in daemons:
            daemon.close()


__all__ = ["drawing_lean", "plan_lean"]
