"""rig state copy|check|recover: the project's state (wherever --state, RIG_STATE_URL or .rig/ puts it).

``copy`` fills an empty other state; ``check`` runs SQLite's integrity check on the state file;
``recover`` salvages a damaged one into a new file that takes its place (``state/recovery.py``).
Like doctor, they open the state directly instead of loading the engine: none may depend on
rig_config.py importing cleanly, nor on a damaged state opening. The project's ``.env`` is
loaded first, so a ``RIG_STATE_URL`` kept there names the state as it does for every other command.
"""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.discovery import find_project, locate_state
from rigcli.errors import StateError, UsageError
from rigcli.render.tables import print_message, print_table
from rigcli.state.copy import copy_state
from rigcli.state.damage import damaged, summary, unmark
from rigcli.state.factory import open_state
from rigcli.state.recovery import check_state, recover_state
from rigcli.state_location import PostgresState, state_at


def copy(opts: GlobalOptions, to: str) -> int:
    if not to.strip():
        raise UsageError("state copy needs --to PATH or --to postgresql://...")
    location = find_project(chdir=opts.chdir, config=opts.config, state=opts.state)
    where = locate_state(location)
    destination = state_at(to, base=location.base, source="--to")
    project = str(location.project_dir)
    source = open_state(where, project_dir=project, read_only=True)
    target = open_state(destination, project_dir=project, config_path=str(location.config_path))
    try:
        report = copy_state(source, target)
    finally:
        source.close()
        target.close()
    if opts.json:
        emit_json(report.to_json())
        return 0

    print_table(["table", "rows"], [[table, count] for table, count in report.tables.items()], empty="nothing")
    total = sum(report.tables.values())
    print_message(f"Copied {total} rows from {report.source} to {report.target} (counts verified)", style="green")
    if isinstance(destination, PostgresState):
        print_message("Point the project at it: RIG_STATE_URL=<that URL> in its .env (or --state URL)", style="dim")
    else:
        print_message(f"Use it with: rig --state {destination.display} ...", style="dim")
    return 0


def _sqlite_state(opts: GlobalOptions, command: str) -> str:
    """The project's SQLite state file (``check`` and ``recover`` work on files, not servers)."""

    where = locate_state(find_project(chdir=opts.chdir, config=opts.config, state=opts.state))
    if isinstance(where, PostgresState):
        raise StateError(
            f"rig state {command} works on SQLite state files; a PostgreSQL server checks and restores "
            "its own (pg_amcheck, pg_dump)"
        )
    return where.path


def check(opts: GlobalOptions) -> int:
    """SQLite's full integrity check of the state file: exit 0 when it passes, 1 (one line) when damaged."""

    report = check_state(_sqlite_state(opts, "check"))
    if opts.json:
        emit_json(report.to_json())
    elif report.ok:
        print_message(f"{report.path}: ok (SQLite's integrity check passes)", style="green")
    else:
        shown = report.problems[:20]
        print_table(["problem"], [[problem] for problem in shown], empty="")
    if not report.ok:
        raise damaged(report.path, summary(report.problems))  # later rigs stay off it, as if a query had found it
    unmark(report.path)
    return 0


def recover(opts: GlobalOptions) -> int:
    """Salvage the state into a new file that the project then uses; the damaged one is kept beside it."""

    path = _sqlite_state(opts, "recover")
    if check_state(path).ok:
        if opts.json:
            emit_json({"path": path, "recovered": False, "reason": "it passes SQLite's integrity check"})
        else:
            print_message(f"{path} passes SQLite's integrity check: nothing to recover", style="green")
        return 0
    report = recover_state(path, wait=not opts.no_wait)
    if opts.json:
        emit_json({**report.to_json(), "recovered": True})
        return 0

    print_table(["table", "rows"], [[table, count] for table, count in report.tables.items()], empty="nothing")
    total = sum(report.tables.values())
    print_message(
        f"Recovered {total} rows into {report.path} ({report.method}); it passes SQLite's check", style="green"
    )
    if report.incomplete:
        tables = ", ".join(report.incomplete)
        print_message(f"Rows under damaged pages could not be read in: {tables}", style="yellow")
    print_message(f"The damaged database is kept at {report.backup}", style="dim")
    return 0


__all__ = ["check", "copy", "recover"]
