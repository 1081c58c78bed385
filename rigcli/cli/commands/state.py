"""rig state copy: the project's state (wherever --state, RIG_STATE_URL or .rig/ puts it) into an empty other.

Like doctor, it opens the state directly instead of loading the engine: copying state must not
depend on rig_config.py importing cleanly. The project's ``.env`` is loaded first, so a
``RIG_STATE_URL`` kept there names the source as it does for every other command.
"""

from __future__ import annotations

import os
from pathlib import Path

from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.errors import UsageError
from rigcli.layout import is_state_url


def copy(opts: GlobalOptions, to: str) -> int:
    from rigcli.config_loader import load_dotenv_file
    from rigcli.discovery import base_dir, find_project
    from rigcli.state.copy import copy_state
    from rigcli.state.factory import open_state_store

    if not to.strip():
        raise UsageError("state copy needs --to PATH or --to postgresql://...")
    location = find_project(chdir=opts.chdir, config=opts.config, state=opts.state)
    load_dotenv_file(location.project_dir)
    project = str(location.project_dir)
    given = location.state_location
    source_location = None if given is None else str(given)
    source = open_state_store(None, project_dir=project, state_path=source_location, read_only=True)
    target_location = to if is_state_url(to) else str((base_dir(opts.chdir) / os.path.expanduser(to)).resolve())
    config = str(location.config_path)
    target = open_state_store(None, project_dir=project, config_path=config, state_path=target_location)
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
    if is_state_url(to):
        print_message("Point the project at it: RIG_STATE_URL=<that URL> in its .env (or --state URL)", style="dim")
    else:
        print_message(f"Use it with: rig --state {Path(report.target)} ...", style="dim")
    return 0


__all__ = ["copy"]
