"""rig graph (the workflow as a tree, Graphviz DOT, Mermaid or JSON) and rig runs --timeline / --stats."""

from __future__ import annotations

import os

from rigcli.cli.output import emit_json
from rigcli.cli.spec import GlobalOptions
from rigcli.errors import InputError, UsageError
from rigcli.render import graph as pictures
from rigcli.render.drawing import Drawing, graph_json
from rigcli.render.tables import print_message
from rigcli.run_ids import short_run_id
from rigcli.speed.lazy_modules import lazy_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rigcli.cli.session import Session
    from rigcli.render.drawing import Drawing

if TYPE_CHECKING:
    import pathlib
else:
    pathlib = lazy_module("pathlib")


GRAPH_FORMATS = ("tree", "dot", "mermaid")
STDOUT = "-"  # --format svg -: the picture on stdout


def graph(session: Session, *, format: str | None = None) -> int:
    """The plan ``rig plan`` prints (rigcli/cache/: it may be remembered), laid on the workflow's shape."""
    opts = session.opts
    if opts.json and format not in (None, "tree"):
        raise UsageError(f"--format {format} prints a {format} document; --json prints JSON: choose one")

    answer = session.answers.plan()
    if answer.layout is None:
        raise InputError(f"Workflow {answer.workflow} nests its sequences too deeply to be drawn")
    return _draw(opts, Drawing(answer.drawing()), format)


def _draw(opts: GlobalOptions, drawing: Drawing, format: str | None) -> int:
    if opts.json:
        emit_json(graph_json(drawing))
    elif format in (None, "tree"):
        pictures.print_tree(drawing)
    else:
        _print(pictures.dot(drawing) if format == "dot" else pictures.mermaid(drawing))
    return 0


def runs(
    session: Session,
    run: str | None,
    *,
    timeline: bool = False,
    stats: bool = False,
    format: tuple[str, str] | None = None,
    force: bool = False,
    last: int = 20,
) -> int:
    if timeline and stats:
        raise UsageError("Choose --timeline or --stats, not both")
    if format is not None and not timeline:
        raise UsageError("--format svg FILE draws a timeline: add --timeline")
    if force and format is None:
        raise UsageError("--force lets --format svg FILE overwrite FILE: add --format svg FILE")
    if stats:
        if run is not None:
            raise UsageError("--stats covers the last applies (--last N), not one: drop RUN")
        return _stats(session, last)
    if timeline:
        return _timeline(session, run, format, force=force)
    raise UsageError("rig runs needs --timeline [RUN] or --stats")


def _timeline(session: Session, run: str | None, format: tuple[str, str] | None, *, force: bool) -> int:
    if format is not None and format[0] != "svg":
        raise UsageError(f"Unknown timeline format {format[0]}: the one format is svg (--format svg FILE)")
    to_stdout = format is not None and format[1] == STDOUT
    if to_stdout and session.opts.json:
        raise UsageError("--format svg - prints the picture; --json prints JSON: choose one")
    target = None if format is None or to_stdout else pathlib.Path(format[1])
    if target is not None and not force and os.path.lexists(target):  # refused before anything is read
        raise InputError(f"{target} already exists: pass --force to overwrite it, or - to print the picture")
    engine = session.engine
    drawn = session.with_workflow(lambda workflow: engine.pictures.timeline(run=run, workflow=workflow))
    if format is not None:
        from rigcli.render.svg import timeline_svg

        picture = timeline_svg(drawn)
        if target is None:
            _print(picture)
            return 0
        _write_whole(target, picture)
        if not session.opts.json:
            print_message(f"Wrote the timeline of apply {short_run_id(drawn.run_id)} to {target}")
    if session.opts.json:
        emit_json(drawn.to_json())
    elif format is None:
        from rigcli.render.timeline import print_timeline

        print_timeline(drawn)
    return 0


def _print(text: str) -> None:
    from rigcli.streams import real_stdout

    stdout = real_stdout()
    stdout.write(text + "\n")
    stdout.flush()


def _write_whole(target: pathlib.Path, text: str) -> None:
    """``text`` into ``target`` through a temporary file beside it, moved into place: a failed
    write leaves ``target`` as it was, never half a picture."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise InputError(f"Cannot write {target}: {exc.strerror or exc}") from None


def _stats(session: Session, last: int) -> int:
    engine = session.engine
    stats = session.with_workflow(lambda workflow: engine.pictures.run_stats(workflow=workflow, last=last))
    if session.opts.json:
        emit_json(stats.to_json())
        return 0
    from rigcli.render.timeline import print_stats

    print_stats(stats)
    return 0


__all__ = ["GRAPH_FORMATS", "graph", "runs"]
