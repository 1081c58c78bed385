"""``rig graph`` drawn: a tree for people (Rich on a terminal, plain text elsewhere), DOT, Mermaid and JSON.

Everything here draws a ``render/drawing.py:Drawing``, so the graph a load just planned
and the one ``rig plan`` kept (``cli/commands/plan.py``) print through these same writers.
The tree's rows are laid out here once and only styled for a terminal, so a pipe gets the same
columns without escapes (and without importing Rich). DOT and Mermaid are documents: always plain,
whatever stdout is. Every name is the project's, so each is sanitized on its way out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from rigcli.masking import mask_text
from rigcli.render.console import stdout_console
from rigcli.render.drawing import Drawing, DrawnNode
from rigcli.render.plain import plain_stdout
from rigcli.render.tables import STATUS_STYLES
from rigcli.run_ids import short_run_id
from rigcli.sanitize import sanitize
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.tables import cell_width, write_lines

TYPE_CHECKING = False  # not typing's: see render/drawing.py
if TYPE_CHECKING:
    from rigcli.render.drawing import DrawnItem

if TYPE_CHECKING:
    import rich.text as rich_text
else:
    rich_text = lazy_module("rich.text")


UNICODE_GUIDES = ("├── ", "└── ", "│   ", "    ")
ASCII_GUIDES = ("|-- ", "`-- ", "|   ", "    ")
# Fill and border per plan status, for DOT and Mermaid (readable on light and dark pages).
COLOURS = {"cached": ("#d7f0dd", "#2e7d32"), "pending": ("#fff1c2", "#b7791f")}


def _text(value: str) -> str:
    return sanitize(mask_text(value))


class TreeRow:
    """One line of the tree: its guides, label and, for a task, the verdict. (A plain class: a kept
    plan is drawn without importing dataclasses.)"""

    __slots__ = ("guides", "kind", "label", "node")

    def __init__(self, guides: str, label: str, kind: str, node: DrawnNode | None = None) -> None:
        self.guides, self.label = guides, label
        self.kind = kind  # "task", "sequence", "parallel" or "branch"
        self.node = node

    @property
    def detail(self) -> str:
        """Why: the reason code of a pending task, the run a cached one reuses."""
        if self.node is None:
            return ""
        if self.node.status == "cached":
            return f"run {short_run_id(self.node.run_id)}" if self.node.run_id else "cached"
        return self.node.code


def tree_rows(graph: Drawing, *, unicode: bool = True) -> list[TreeRow]:
    """The tree below the heading, one row per task and group, in execution order."""
    guides = UNICODE_GUIDES if unicode else ASCII_GUIDES
    return list(_rows(graph.items, "", guides))


def _rows(items: Sequence[DrawnItem], indent: str, guides: tuple[str, ...]) -> Iterator[TreeRow]:
    tee, last, down, blank = guides
    for position, item in enumerate(items):
        final = position == len(items) - 1
        here = indent + (last if final else tee)
        below = indent + (blank if final else down)
        if isinstance(item, DrawnNode):
            yield TreeRow(here, _text(item.name), "task", item)
            continue
        only = item.children[0] if len(item.children) == 1 else None
        if item.kind == "branch" and isinstance(only, DrawnNode) and only.name == item.name:
            yield TreeRow(here, _text(only.name), "task", only)  # a branch that is one task of its name
            continue
        yield TreeRow(here, _text(item.name) if item.kind != "parallel" else "parallel", item.kind)
        yield from _rows(item.children, below, guides)


def heading(graph: Drawing) -> str:
    return f"{_text(graph.workflow)}  {graph.cached_node_count}/{len(graph.nodes)} cached"


def tree_lines(graph: Drawing, *, unicode: bool = True) -> list[str]:
    """The tree as plain text: the heading, then every row with its verdict in aligned columns."""
    rows = tree_rows(graph, unicode=unicode)
    left = max((cell_width(row.guides + row.label) for row in rows), default=0)
    status = max((len(row.node.status) for row in rows if row.node), default=0)
    lines = [heading(graph)]
    for row in rows:
        text = row.guides + row.label
        if row.node is not None:
            pad = " " * (left - cell_width(text))
            text = f"{text}{pad}  {row.node.status.ljust(status)}  {row.detail}".rstrip()
        lines.append(text)
    return lines


def print_tree(graph: Drawing) -> None:
    """On a terminal in colour (Rich), elsewhere as plain lines."""
    plain = plain_stdout()
    if plain is not None:
        write_lines(plain, tree_lines(graph, unicode=_utf8(plain)))
        return

    out = stdout_console()
    rows = tree_rows(graph, unicode=(out.encoding or "").lower().replace("-", "").startswith("utf"))
    left = max((cell_width(row.guides + row.label) for row in rows), default=0)
    status = max((len(row.node.status) for row in rows if row.node), default=0)
    workflow = _text(graph.workflow)
    out.print(rich_text.Text.assemble((workflow, "bold"), heading(graph)[len(workflow) :]))
    status_styles: dict[str, str] = {status: style for status, style in STATUS_STYLES.items()}
    styles = {"sequence": "bold", "parallel": "dim italic", "branch": "cyan"}
    for row in rows:
        line = rich_text.Text.assemble((row.guides, "dim"), (row.label, styles.get(row.kind, "")))
        if row.node is not None:
            line.append(" " * (left - cell_width(row.guides + row.label)) + "  ")
            line.append(row.node.status.ljust(status), style=status_styles.get(row.node.status, ""))
            line.append("  " + row.detail, style="dim")
        out.print(line, soft_wrap=True)


def _utf8(stream: object) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "").startswith("utf")


# -- DOT (Graphviz) ------------------------------------------------------------------------------


def _dot_string(value: str) -> str:
    return '"' + _text(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_label(node: DrawnNode, separator: str) -> str:
    verdict = node.status if node.status == "cached" else f"{node.status}: {node.code}"
    return f"{node.path}{separator}{verdict}"


def dot(graph: Drawing) -> str:
    """A Graphviz digraph: tasks coloured by status, each parallel branch a ``cluster_…`` subgraph."""
    lines = [
        f"digraph {_dot_string(graph.workflow)} {{",
        f"  graph [label={_dot_string(heading(graph))}, labelloc=t, rankdir=TB, fontname=Helvetica];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica];',
        "  edge [color=gray40];",
    ]
    clusters = itertools.count()

    def place(items: Sequence[DrawnItem], indent: str) -> None:
        for item in items:
            if isinstance(item, DrawnNode):
                fill, border = COLOURS.get(item.status, ("white", "black"))
                attributes = (
                    f"label={_dot_string(_node_label(item, chr(10)))}, "
                    f'fillcolor="{fill}", color="{border}", tooltip={_dot_string(item.message)}'
                )
                lines.append(f"{indent}{_dot_string(item.path)} [{attributes}];")
            elif item.kind == "branch":
                lines.append(f"{indent}subgraph cluster_{next(clusters)} {{")
                lines.append(f'{indent}  label={_dot_string(item.name)}; style="rounded,dashed"; color=gray50;')
                place(item.children, indent + "  ")
                lines.append(f"{indent}}}")
            else:
                place(item.children, indent)

    place(graph.items, "  ")
    lines.extend(f"  {_dot_string(source)} -> {_dot_string(target)};" for source, target in graph.edges)
    lines.append("}")
    return "\n".join(lines)


# -- Mermaid -------------------------------------------------------------------------------------

_MERMAID_ESCAPES = str.maketrans({'"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;", "#": "#35;"})


def _mermaid_text(value: str) -> str:
    return _text(value).replace("\n", " ").translate(_MERMAID_ESCAPES)


def mermaid(graph: Drawing) -> str:
    """A Mermaid ``flowchart``: it renders where Markdown does (a README, a pull request)."""
    ids = {node.path: f"n{index}" for index, node in enumerate(graph.nodes)}
    lines = ["flowchart TD"]
    for status, (fill, border) in COLOURS.items():
        lines.append(f"  classDef {status} fill:{fill},stroke:{border},color:#1a1a1a")
    branches = itertools.count()

    def place(items: Sequence[DrawnItem], indent: str) -> None:
        for item in items:
            if isinstance(item, DrawnNode):
                label = _mermaid_text(item.path) + "<br/>" + _mermaid_text(_node_label(item, "")[len(item.path) :])
                lines.append(f'{indent}{ids[item.path]}["{label}"]')
            elif item.kind == "branch":
                lines.append(f'{indent}subgraph b{next(branches)}["{_mermaid_text(item.name)}"]')
                place(item.children, indent + "  ")
                lines.append(f"{indent}end")
            else:
                place(item.children, indent)

    place(graph.items, "  ")
    lines.extend(f"  {ids[source]} --> {ids[target]}" for source, target in graph.edges)
    for status in COLOURS:
        members = [ids[node.path] for node in graph.nodes if node.status == status]
        if members:
            lines.append(f"  class {','.join(members)} {status}")
    return "\n".join(lines)


__all__ = [
    "ASCII_GUIDES",
    "UNICODE_GUIDES",
    "dot",
    "heading",
    "mermaid",
    "print_tree",
    "tree_lines",
    "tree_rows",
]
