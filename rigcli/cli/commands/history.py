"""rig logs and rig runs: the stored output of runs, and the history of applies."""

from __future__ import annotations

# Not typing.TYPE_CHECKING: `rig logs TASK`'s lean path starts here and imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from rigcli.cli.session import Session
    from rigcli.cli.spec import GlobalOptions
    from rigcli.engine.history_views import LogSelection


def logs(opts: GlobalOptions, task: str | None, *, run: str | None = None, follow: bool = False) -> int:
    """A task's last successful run is copied out without loading the config or the engine when the
    state alone can say which run it is (``cli/commands/lean_logs.py``); anything else goes the full way."""
    if task is not None and run is None and not opts.json:
        from rigcli.cli.commands.lean_logs import copy_last_run

        if copy_last_run(opts, task):
            return 0
    from rigcli.cli.session import Session

    with Session(opts) as session:
        return _logs(session, task, run=run, follow=follow)


def _logs(session: Session, task: str | None, *, run: str | None, follow: bool) -> int:
    engine = session.engine
    selection = session.with_workflow(lambda workflow: engine.select_logs(workflow, task, run))
    if session.opts.json:
        return _logs_json(session, selection, follow)
    from rigcli.cli.interrupts import Interrupted
    from rigcli.render.history import LogWriter

    writer = LogWriter(headers=selection.apply is not None)
    try:
        for update in engine.read_logs(selection, follow=follow, as_bytes=True):
            writer.write(update)
    except Interrupted as exc:  # Ctrl-C ends a --follow: the normal way out, no error line
        return exc.exit_code
    return session.interrupted_code() or 0


def _logs_json(session: Session, selection: LogSelection, follow: bool) -> int:
    """``{"run_id", "node_path", "status", "lines", "metadata", ...}``; for an apply,
    ``{"apply_id", "workflow", "status", "started_at", "finished_at", "runs": [...]}``."""
    from rigcli.cli.output import emit_json
    from rigcli.engine.history_views import output_lines
    from rigcli.jsonutil import JsonValue
    from rigcli.records import OutputChunk

    chunks: dict[str, list[OutputChunk]] = {}
    finals = {}
    for update in session.engine.read_logs(selection, follow=follow):
        chunks.setdefault(update.log.run.id, []).extend(update.chunks)
        finals[update.log.run.id] = update.log
    code = session.interrupted_code()
    if code:
        return code
    runs: list[JsonValue] = [log.to_json(output_lines(chunks.get(run_id, []))) for run_id, log in finals.items()]
    if selection.apply is None:
        emit_json(runs[0] if runs else None)
        return 0
    apply = selection.apply.record
    emit_json(
        {
            "apply_id": apply.id,
            "workflow": apply.workflow,
            "status": selection.apply.status,
            "started_at": apply.started_at,
            "finished_at": apply.finished_at,
            "runs": runs,
        }
    )
    return 0


def runs(
    session: Session,
    run: str | None,
    *,
    timeline: bool = False,
    stats: bool = False,
    format: tuple[str, str] | None = None,
    last: int = 20,
    limit: int = 20,
) -> int:
    """The history of applies, or one apply's tasks; ``--timeline``/``--stats`` are pictures of it."""
    if timeline or stats or format is not None:
        from rigcli.cli.commands import pictures

        return pictures.runs(session, run, timeline=timeline, stats=stats, format=format, last=last)
    from rigcli.cli.output import emit_json

    engine = session.engine
    workflow = session.workflow_filter()
    if run is not None:
        applied = engine.find_apply(run, workflow)
        if session.opts.json:
            emit_json(applied.to_json())
            return 0
        from rigcli.render.history import print_apply

        print_apply(applied)
        return 0
    applies = engine.list_applies(workflow, limit)
    if session.opts.json:
        emit_json({"runs": [applied.to_json() for applied in applies]})
        return 0
    from rigcli.render.history import print_runs

    print_runs(applies)
    return 0


__all__ = ["logs", "runs"]
