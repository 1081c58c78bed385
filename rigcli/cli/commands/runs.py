"""rig runs: the history of applies, one apply's tasks, or (--timeline, --stats) pictures of them."""

from __future__ import annotations

from rigcli.cli.commands import pictures
from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import UsageError
from rigcli.render.history import print_apply, print_runs


def runs(
    session: Session,
    run: str | None,
    *,
    timeline: bool = False,
    stats: bool = False,
    format: tuple[str, str] | None = None,
    force: bool = False,
    last: int = 20,
    limit: int = 20,
) -> int:
    """The history of applies, or one apply's tasks; ``--timeline``/``--stats`` are pictures of it."""
    session.config_optional = True  # the history is the state's: a broken rig_config.py does not hide it
    if timeline or stats or format is not None:
        return pictures.runs(session, run, timeline=timeline, stats=stats, format=format, force=force, last=last)
    if force:
        raise UsageError("--force lets --format svg FILE overwrite FILE: add --timeline --format svg FILE")

    engine = session.engine
    workflow = session.workflow_filter()
    if run is not None:
        applied = engine.history.find_apply(run, workflow)
        if session.opts.json:
            emit_json(applied.to_json())
            return 0
        print_apply(applied)
        return 0
    applies = engine.history.list_applies(workflow, limit, entries=True)  # workspaces' entries too
    if session.opts.json:
        emit_json({"runs": [applied.to_json() for applied in applies]})
        return 0
    print_runs(applies)
    return 0


__all__ = ["runs"]
