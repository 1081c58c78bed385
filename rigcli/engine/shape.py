"""A workflow as people draw it: sequences and parallel branches as groups, edges in execution order.

Pure. The compiler (``graph.py``) flattens sequences into plan order and keeps only parallel
blocks as structure; the sequences come back from the display paths, which carry every nested
sequence's name (DESIGN §3), so nothing here has to agree with the compiler but the paths.

Edges follow execution order: each task follows the tasks that finished just before it — the
previous task of its sequence, or every last task of the parallel block before it (fan-in) — and
the first task of each parallel branch follows what came before the block (fan-out). A branch
without tasks passes what came before it straight through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Union

from rigcli.engine.results import JsonObject, PlanNode
from rigcli.graph import ParallelSpec, StepSpec, TaskSpec
from rigcli.jsonutil import JsonValue
from rigcli.speed.records import lazy_dataclass

GroupKind = Literal["sequence", "parallel", "branch"]
Edge = tuple[str, str]


@lazy_dataclass(frozen=True)
class GraphGroup:
    """A sequence, a parallel block, or one branch of it, holding tasks and groups in order."""

    kind: GroupKind
    name: str  # the sequence's name or the branch's key ("" for a parallel block)
    path: str  # the display-path prefix of what it holds
    children: tuple[GraphItem, ...]


GraphItem = Union[PlanNode, GraphGroup]  # noqa: UP007 - referenced before GraphGroup is complete


@lazy_dataclass(frozen=True)
class WorkflowGraph:
    """``rig graph``: the workflow's tasks with their plan verdicts, its groups, and its edges."""

    workflow: str
    root: GraphGroup
    nodes: tuple[PlanNode, ...]  # plan order, which is an order of execution (edges only go forward)
    edges: tuple[Edge, ...]

    def drawing(self) -> JsonObject:
        """What ``render/graph.py`` draws: the plan's nodes (as ``rig plan --json`` writes them), the
        edges, and the groups as a ``layout`` (``layout_json``), plain data that ``rig plan`` keeps for
        a later ``rig graph`` to draw without the config."""
        return {"workflow": self.workflow, "nodes": [node.to_json() for node in self.nodes], **self.shape_json()}

    def shape_json(self) -> JsonObject:
        """The edges and the ``layout`` alone: what ``rig plan`` keeps beside its document, whose
        nodes are the drawing's."""
        return {"edges": [[source, target] for source, target in self.edges], "layout": layout_json(self.root.children)}


def layout_json(items: Sequence[GraphItem]) -> list[JsonValue]:
    """The groups of a graph as plain data: a task is its path, a group ``[kind, name, path, items]``."""
    return [
        item.path if isinstance(item, PlanNode) else [item.kind, item.name, item.path, layout_json(item.children)]
        for item in items
    ]


def workflow_graph(workflow: str, steps: Sequence[StepSpec], plan: Sequence[PlanNode]) -> WorkflowGraph:
    """The graph of a compiled workflow's ``steps``, each task shown with its node of ``plan``."""
    by_path = {node.path: node for node in plan}
    edges: list[Edge] = []
    _connect(steps, [], edges)
    root = GraphGroup("sequence", workflow, "", _items(steps, "", by_path))
    return WorkflowGraph(workflow, root, tuple(plan), tuple(dict.fromkeys(edges)))


def execution_edges(steps: Sequence[StepSpec]) -> list[Edge]:
    """The edges alone (for a timeline's critical path)."""
    edges: list[Edge] = []
    _connect(steps, [], edges)
    return list(dict.fromkeys(edges))


def _connect(steps: Sequence[StepSpec], frontier: list[str], edges: list[Edge]) -> list[str]:
    """Add the edges of ``steps`` entered from ``frontier``; return the tasks it leaves from."""
    for step in steps:
        if isinstance(step, TaskSpec):
            edges.extend((before, step.path) for before in frontier)
            frontier = [step.path]
        else:
            joined: list[str] = []
            for _, branch in step.branches:
                joined.extend(_connect(branch, frontier, edges))
            frontier = list(dict.fromkeys(joined))
    return frontier


def _relative(path: str, prefix: str) -> str:
    if not prefix:
        return path
    return path[len(prefix) + 1 :] if path.startswith(prefix + ".") else ("" if path == prefix else path)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _sequence_of(step: StepSpec, prefix: str) -> str | None:
    """The nested sequence (its name under ``prefix``) that ``step`` sits in, or None if directly in ``prefix``."""
    relative = _relative(step.path, prefix)
    head, dot, _ = relative.partition(".")
    if isinstance(step, TaskSpec):
        return head if dot else None
    return head or None


def _items(steps: Sequence[StepSpec], prefix: str, plan: Mapping[str, PlanNode]) -> tuple[GraphItem, ...]:
    items: list[GraphItem] = []
    index = 0
    while index < len(steps):
        step = steps[index]
        sequence = _sequence_of(step, prefix)
        if sequence is not None:
            # Consecutive steps under one name are that nested sequence.
            end = index + 1
            while end < len(steps) and _sequence_of(steps[end], prefix) == sequence:
                end += 1
            inner = _join(prefix, sequence)
            items.append(GraphGroup("sequence", sequence, inner, _items(steps[index:end], inner, plan)))
            index = end
            continue
        items.append(plan[step.path] if isinstance(step, TaskSpec) else _parallel(step, plan))
        index += 1
    return tuple(items)


def _parallel(step: ParallelSpec, plan: Mapping[str, PlanNode]) -> GraphGroup:
    branches: list[GraphItem] = []
    for key, steps in step.branches:
        inner = _join(step.path, key)
        # A branch that is one task named like its key is not prefixed by the key (DESIGN §3).
        single = len(steps) == 1 and isinstance(steps[0], TaskSpec) and steps[0].path == inner
        prefix = step.path if single else inner
        branches.append(GraphGroup("branch", key, inner, _items(steps, prefix, plan)))
    return GraphGroup("parallel", "", step.path, tuple(branches))


__all__ = ["Edge", "GraphGroup", "GraphItem", "WorkflowGraph", "execution_edges", "layout_json", "workflow_graph"]
