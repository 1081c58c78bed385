"""rig graph: the selected workflow as a tree, a Graphviz DOT or a Mermaid document, or JSON."""

from __future__ import annotations

from rigcli.cli.output import emit_json
from rigcli.cli.session import Session
from rigcli.errors import UsageError
from rigcli.streams import real_stdout

GRAPH_FORMATS = ("tree", "dot", "mermaid")


def graph(session: Session, *, format: str | None = None) -> int:
    if session.opts.json and format not in (None, "tree"):
        raise UsageError(f"--format {format} prints a {format} document; --json prints JSON: choose one")
    engine = session.engine
    drawn = session.with_workflow(lambda workflow: session.run(engine.graph(workflow=workflow)))
    if session.opts.json:
        emit_json(drawn.to_json())
        return 0
    from rigcli.render import graph as pictures

    if format in (None, "tree"):
        pictures.print_tree(drawn)
        return 0
    document = pictures.dot(drawn) if format == "dot" else pictures.mermaid(drawn)
    stdout = real_stdout()
    stdout.write(document + "\n")
    stdout.flush()
    return 0


__all__ = ["GRAPH_FORMATS", "graph"]
