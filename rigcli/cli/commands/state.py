"""rig state copy: the project's state (wherever --state, RIG_STATE_URL or .rig/ puts it) into an empty other.

Like doctor, it opens the state directly instead of loading the engine: copying state must not
depend on rig_config.py importing cleanly. The project's ``.env`` is loaded first, so a
``RIG_STATE_URL`` kept there names the source as it does for every other command.
"""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.errors import UsageError
from rigcli.state_location import PostgresState


def copy(opts: GlobalOptions, to: str) -> int:
    from rigcli.discovery import find_project, locate_state
    from rigcli.state.copy import copy_state
    from rigcli.state.factory import open_state
    from rigcli.state_location import state_at

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
    from rigcli.render.tables import print_message, print_table

    print_table(["table", "rows"], [[table, count] for table, count in report.tables.items()], empty="nothing")
    total = sum(report.tables.values())
    print_message(f"Copied {total} rows from {report.source} to {report.target} (counts verified)", style="green")
    if isinstance(destination, PostgresState):
        print_message("Point the project at it: RIG_STATE_URL=<that URL> in its .env (or --state URL)", style="dim")
    else:
        print_message(f"Use it with: rig --state {destination.display} ...", style="dim")
    return 0


__all__ = ["copy"]
