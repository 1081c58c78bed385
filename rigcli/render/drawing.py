"""A graph as drawn, read back from plain data: what ``rig graph`` prints, computed or remembered (rigcli/cache/).

The data is ``engine/shape.py:WorkflowGraph.drawing``: the plan's nodes as ``rig plan --json``
writes them, the edges, and the groups as a ``layout`` (a task is its path, a group ``[kind, name,
path, items]``). ``rig plan`` keeps it, so ``rig graph`` can be drawn without the config; anything
that is not such data raises ValueError, KeyError or TypeError as it is read, and the engine answers.
"""

from __future__ import annotations

from collections.abc import Mapping

# Not typing.TYPE_CHECKING: `rig graph` draws a kept plan on a path that imports neither typing
# nor json (rigcli/__init__.py says why); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    from rigcli.jsonutil import JsonObject


class DrawnNode:
    """A task as drawn: a node of ``rig plan --json``."""

    __slots__ = ("code", "message", "name", "path", "reason", "run_id", "status")

    def __init__(self, node: Mapping[str, object]) -> None:
        reason = node["reason"]
        run_id = node.get("run_id")
        if not isinstance(reason, dict) or not (run_id is None or isinstance(run_id, str)):
            raise ValueError("not a plan node")
        self.path, self.name, self.status = _str(node["path"]), _str(node["name"]), _str(node["status"])
        self.code, self.message = _str(reason["code"]), _str(reason["message"])
        self.reason: JsonObject = reason
        self.run_id = run_id


class DrawnGroup:
    """A sequence, a parallel block (name ""), or one branch of it, holding tasks and groups in order."""

    __slots__ = ("children", "kind", "name", "path")

    def __init__(self, kind: str, name: str, path: str, children: list[DrawnItem]) -> None:
        self.kind, self.name, self.path, self.children = kind, name, path, children


if TYPE_CHECKING:
    DrawnItem: TypeAlias = DrawnNode | DrawnGroup


class Drawing:
    """A drawing read back: its nodes in plan order (an order of execution), edges and groups."""

    __slots__ = ("edges", "items", "nodes", "workflow")

    def __init__(self, drawing: Mapping[str, object]) -> None:
        """Raises ValueError, KeyError or TypeError for data that is not a drawing."""
        nodes, edges, layout = drawing["nodes"], drawing["edges"], drawing["layout"]
        if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(layout, list):
            raise ValueError("not a drawing")
        self.workflow = _str(drawing["workflow"])
        self.nodes = [DrawnNode(_object(node)) for node in nodes]
        self.edges = [(_str(source), _str(target)) for source, target in map(_pair, edges)]
        by_path = {node.path: node for node in self.nodes}
        self.items = _items(layout, by_path)

    @property
    def cached_node_count(self) -> int:
        return sum(1 for node in self.nodes if node.status == "cached")


def _items(layout: list[object], by_path: Mapping[str, DrawnNode]) -> list[DrawnItem]:
    items: list[DrawnItem] = []
    for entry in layout:
        if isinstance(entry, str):
            items.append(by_path[entry])
            continue
        if not isinstance(entry, list) or len(entry) != 4:
            raise ValueError("not a layout")
        kind, name, path, children = entry
        if not isinstance(children, list):
            raise ValueError("not a layout")
        items.append(DrawnGroup(_str(kind), _str(name), _str(path), _items(children, by_path)))
    return items


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _object(value: object) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def _pair(value: object) -> tuple[object, object]:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("not an edge")
    return value[0], value[1]


def graph_json(drawing: Drawing) -> JsonObject:
    """``rig graph --json`` (DESIGN §11)."""
    return {
        "workflow": drawing.workflow,
        "nodes": [
            {"path": node.path, "name": node.name, "status": node.status, "reason": node.reason}
            for node in drawing.nodes
        ],
        "edges": [[source, target] for source, target in drawing.edges],
    }


__all__ = ["Drawing", "DrawnGroup", "DrawnNode", "graph_json"]
