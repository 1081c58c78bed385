"""rig logs: the stored output of a task's last run, of a run, of every run of an apply, or of a
workspace's history entry (``--workspace``: its create hook, rm, an operation, stop, start).

Which runs ``rig logs TASK`` means is what the config says (an answer the cache may give,
``rigcli/cache/``); a task's last run that succeeded, in a SQLite state, is copied straight out
of the file (``state/output_file.py``); anything else is read through the engine.
"""

from __future__ import annotations

from rigcli.render.console import no_color
from rigcli.render.stored_bytes import StoredBytes
from rigcli.speed.pipes import widen_pipe
from rigcli.state.output_file import OutputFile

TYPE_CHECKING = False  # not typing's: a remembered answer's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cache.answers import ConfigAnswer
    from rigcli.cli.session import Session
    from rigcli.engine.history_views import LogSelection


def logs(
    session: Session, task: str | None, *, run: str | None = None, follow: bool = False, workspace: str | None = None
) -> int:
    session.config_optional = True  # stored output is the state's: a broken rig_config.py does not hide it
    opts = session.opts
    if workspace is not None and task is not None:
        from rigcli.errors import UsageError

        raise UsageError("logs takes a TASK or --workspace WS, not both")
    plain = task is not None and run is None and not opts.json and not opts.json_stream
    if plain and task is not None and _copy_last_run(session, session.answers.config(), task):
        return 0
    return _logs(session, task, run=run, follow=follow, workspace=workspace)


def _copy_last_run(session: Session, answer: ConfigAnswer, task: str) -> bool:
    """Copy TASK's last run's stored output to stdout and return True when the state alone can say which
    run it is: SQLite state, TASK names one task of the project's own store in the workflow the
    command means, its newest run succeeded, and no workspace is due to expire; else do nothing and
    return False."""
    start = session.answers.start
    named = _named_task(answer, session.opts.workflow, task)
    if start is None or start.state_path is None or named is None:
        return False
    workflow, cache_path, store = named
    if store != "local":  # a global fragment's runs live in $RIG_HOME, found through the config
        return False

    opened = OutputFile.open(start.state_path)
    if opened is None:
        return False
    try:
        found = None if opened.expiry_due() else opened.last_run(workflow, cache_path)
        if found is None:
            return False

        # What was stored was masked on its way in; colour only on a terminal that wants it, as
        # render/history.py:LogWriter decides.
        stdout = session.stdout_bytes()
        widen_pipe(stdout.fileno())
        writer = StoredBytes(stdout.write, colour=stdout.isatty() and not no_color())
        for data, ends_chunk in opened.pieces(found.id):
            writer.write(data, ends_chunk=ends_chunk)
        stdout.flush()
    finally:
        opened.close()
    return True


def _named_task(answer: ConfigAnswer, workflow: str | None, task: str) -> tuple[str, str, str] | None:
    """(workflow, cache path, store) of the one task ``task`` names in the workflow a command means, as a
    load picks it (``Project.select``, then ``engine/selection.py:match_tasks``); None for anything else
    (no workflow, several, no task, several tasks): the engine then answers, with its errors."""
    names = list(answer.workflows)
    if workflow is None:
        if len(names) != 1:
            return None
        workflow = names[0]
    if workflow not in answer.workflows:
        return None
    rows = answer.tasks(workflow)
    matches = [row for row in rows if task in (row[0], row[1])] or [row for row in rows if row[2] == task]
    if len(matches) != 1:
        return None
    return workflow, str(matches[0][1]), str(matches[0][3])


def _logs(session: Session, task: str | None, *, run: str | None, follow: bool, workspace: str | None) -> int:
    engine = session.engine
    if workspace is not None:  # its history's entries are found by the workspace, in any workflow
        selection = engine.history.select_workspace_logs(workspace, session.opts.workflow, run)
    else:
        selection = session.with_workflow(lambda workflow: engine.history.select_logs(workflow, task, run))
    if session.opts.json:
        return _logs_json(session, selection, follow)
    from rigcli.cli.signalled import Interrupted
    from rigcli.render.history import LogWriter

    # Followed, an apply's runs interleave (parallel branches): each line then names its task.
    prefixed = follow and selection.apply is not None
    writer = LogWriter(headers=selection.apply is not None, prefixed=prefixed)
    try:
        for update in engine.history.read_logs(selection, follow=follow, as_bytes=not prefixed):
            writer.write(update)
    except Interrupted as exc:  # Ctrl-C ends a --follow: the normal way out, no error line
        return exc.exit_code
    return session.interrupted_code() or 0


def _logs_json(session: Session, selection: LogSelection, follow: bool) -> int:
    """``{"run_id", "node_path", "status", "lines", "metadata", ...}``; for an apply,
    ``{"apply_id", "workflow", "status", "started_at", "finished_at", "runs": [...]}``."""
    from rigcli.cli.output import emit_json  # masking with it: a stored run copied out needs none
    from rigcli.engine.history_views import output_lines
    from rigcli.jsonutil import JsonValue
    from rigcli.records import OutputChunk

    chunks: dict[str, list[OutputChunk]] = {}
    finals = {}
    for update in session.engine.history.read_logs(selection, follow=follow):
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


__all__ = ["logs"]
