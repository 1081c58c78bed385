"""rig logs and rig runs: the stored output of runs, and the history of applies."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.engine.history_views import LogSelection, output_lines
from rigcli.jsonutil import JsonValue
from rigcli.records import OutputChunk


def logs(session: Session, task: str | None, *, run: str | None = None, follow: bool = False) -> int:
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
