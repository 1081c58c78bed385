"""rig graph through the installed rig: the tree, DOT read back by a DOT parser, Mermaid, JSON, completion."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pexpect
import pydot
import pytest

from tests.cli.cli_support import REPO_ROOT, RIG, Result, env_with_rig, run_rig, write_project

# pydot's parser calls pyparsing's old names; that is pydot's business, not this test's.
pytestmark = pytest.mark.filterwarnings("ignore:'[a-zA-Z]+' deprecated")

# Nested sequences, parallel branches (one of them parallel again), a branch that is one task,
# a branch whose sequence has another name, and a task after the block.
NESTED_CONFIG = """
from rigcli import sequence


def noop(step):
    return None


base = sequence("base").task("first", noop).add(sequence("tools").task("python", noop).task("node", noop))
left = (
    sequence("left")
    .task("fetch", noop)
    .parallel(x=sequence("x").task("deep", noop), y=sequence("inner").task("z", noop))
)
solo = sequence("solo").task("solo", noop).task("more", noop)
workflows = (
    sequence("web")
    .add(base)
    .parallel(left=left, right=sequence("right").task("data", noop), solo=solo)
    .task("join", noop)
)
"""

PATHS = [
    "base.first",
    "base.tools.python",
    "base.tools.node",
    "left.fetch",
    "left.x.deep",
    "left.y.inner.z",
    "right.data",
    "solo.solo",
    "solo.more",
    "join",
]
EDGES = [
    ["base.first", "base.tools.python"],
    ["base.tools.python", "base.tools.node"],
    ["base.tools.node", "left.fetch"],  # fan-out into each branch
    ["left.fetch", "left.x.deep"],  # and again inside the left branch
    ["left.fetch", "left.y.inner.z"],
    ["base.tools.node", "right.data"],
    ["base.tools.node", "solo.solo"],
    ["solo.solo", "solo.more"],
    ["left.x.deep", "join"],  # fan-in from every branch's last task
    ["left.y.inner.z", "join"],
    ["right.data", "join"],
    ["solo.more", "join"],
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "nested", NESTED_CONFIG)


def rig(project: Path, *args: str) -> Result:
    return run_rig(*args, cwd=project, env={"NO_COLOR": "1"}, subprocess=True)


def test_json_lists_nodes_in_plan_order_and_edges_in_execution_order(project: Path) -> None:
    before = rig(project, "--json", "graph")
    assert before.returncode == 0, before
    graph = before.json
    assert set(graph) == {"workflow", "nodes", "edges"}
    assert graph["workflow"] == "web"
    assert [node["path"] for node in graph["nodes"]] == PATHS
    assert [node["name"] for node in graph["nodes"]][:3] == ["first", "python", "node"]
    assert {node["status"] for node in graph["nodes"]} == {"pending"}
    assert graph["nodes"][0]["reason"]["code"] == "no-previous-run"
    assert graph["nodes"][1]["reason"] == {"code": "upstream-pending", "message": "upstream output is pending"}
    assert graph["edges"] == EDGES
    assert rig(project, "apply").returncode == 0
    after = rig(project, "--json", "graph").json
    assert [(node["status"], node["reason"]["code"]) for node in after["nodes"]] == [("cached", "cached")] * 10
    assert after["edges"] == EDGES


def test_tree_shows_groups_as_a_tree_with_each_tasks_status_and_reason(project: Path) -> None:
    result = rig(project, "graph")  # stdout is a pipe: plain text, no escapes
    assert result.returncode == 0, result
    assert "\x1b" not in result.stdout
    assert result.stdout.splitlines() == [
        "web  0/10 cached",
        "├── base",
        "│   ├── first              pending  no-previous-run",
        "│   └── tools",
        "│       ├── python         pending  upstream-pending",
        "│       └── node           pending  upstream-pending",
        "├── parallel",
        "│   ├── left",
        "│   │   ├── fetch          pending  upstream-pending",
        "│   │   └── parallel",
        "│   │       ├── x",
        "│   │       │   └── deep   pending  upstream-pending",
        "│   │       └── y",
        "│   │           └── inner",
        "│   │               └── z  pending  upstream-pending",
        "│   ├── right",
        "│   │   └── data           pending  upstream-pending",
        "│   └── solo",
        "│       ├── solo           pending  upstream-pending",
        "│       └── more           pending  upstream-pending",
        "└── join                   pending  upstream-pending",
    ]


def test_tree_on_a_terminal_is_coloured_and_names_the_run_a_cached_task_reuses(project: Path) -> None:
    assert rig(project, "apply").returncode == 0
    runs = {node["path"]: node["run_id"] for node in rig(project, "--json", "plan").json["nodes"]}
    child = pexpect.spawn(
        RIG,
        ["graph"],
        cwd=str(project),
        env=env_with_rig({"TERM": "xterm-256color", "NO_COLOR": ""}),
        encoding="utf-8",
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = str(child.before)
    assert "\x1b[" in screen  # styled by Rich
    text = re.sub(r"\x1b\[[0-9;]*m", "", screen).replace("\r\n", "\n")
    assert text.splitlines()[0] == "web  10/10 cached"
    join = next(line for line in text.splitlines() if line.startswith("└── join"))
    assert join.split()[-3:] == ["cached", "run", runs["join"][:8]]


def test_dot_reads_back_with_clusters_for_branches_and_colours_by_status(project: Path) -> None:
    result = rig(project, "graph", "--format", "dot")
    assert result.returncode == 0, result
    (graph,) = pydot.graph_from_dot_data(result.stdout)
    assert graph.get_type() == "digraph"

    def nodes(within: pydot.Graph) -> dict[str, pydot.Node]:
        return {
            node.get_name().strip('"'): node
            for node in within.get_nodes()
            if node.get_name() not in ("node", "edge", "graph")
        }

    def clusters(within: pydot.Graph) -> dict[str, pydot.Subgraph]:
        return {sub.get_label().strip('"'): sub for sub in within.get_subgraphs()}

    top = clusters(graph)
    assert set(top) == {"left", "right", "solo"}
    assert all(sub.get_name().startswith("cluster_") for sub in top.values())
    assert set(nodes(top["left"])) == {"left.fetch"}
    inner = clusters(top["left"])
    assert {label: set(nodes(sub)) for label, sub in inner.items()} == {"x": {"left.x.deep"}, "y": {"left.y.inner.z"}}
    assert set(nodes(top["solo"])) == {"solo.solo", "solo.more"}
    assert set(nodes(graph)) == {"base.first", "base.tools.python", "base.tools.node", "join"}
    edges = [[edge.get_source().strip('"'), edge.get_destination().strip('"')] for edge in graph.get_edges()]
    assert edges == EDGES
    first = nodes(graph)["base.first"]
    assert first.get_fillcolor().strip('"') == "#fff1c2"  # pending
    assert "pending: no-previous-run" in first.get_label()

    assert rig(project, "apply").returncode == 0
    (cached,) = pydot.graph_from_dot_data(rig(project, "graph", "--format", "dot").stdout)
    assert {node.get_fillcolor().strip('"') for node in nodes(cached).values()} == {"#d7f0dd"}


def test_mermaid_is_a_flowchart_with_a_subgraph_per_branch(project: Path) -> None:
    result = rig(project, "graph", "--format", "mermaid")
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert lines[0] == "flowchart TD"
    declared = dict(re.findall(r'^\s*(n\d+)\["([^"]*)"\]$', result.stdout, flags=re.MULTILINE))
    paths = {label.split("<br/>")[0]: node_id for node_id, label in declared.items()}
    assert list(paths) == PATHS
    assert declared[paths["base.first"]] == "base.first<br/>pending: no-previous-run"
    by_id = {node_id: path for path, node_id in paths.items()}
    edges = [[by_id[a], by_id[b]] for a, b in re.findall(r"^\s*(n\d+) --> (n\d+)$", result.stdout, flags=re.MULTILINE)]
    assert edges == EDGES
    opened = [line.strip() for line in lines if line.strip().startswith("subgraph ")]
    assert [re.sub(r"^subgraph b\d+\[\"(.*)\"\]$", r"\1", line) for line in opened] == [
        "left",
        "x",
        "y",
        "right",
        "solo",
    ]
    assert len(opened) == sum(1 for line in lines if line.strip() == "end")
    # Nesting: each task is declared inside the subgraphs of its branches.
    depth, inside = 0, {}
    for line in lines[1:]:
        words = line.strip()
        if words.startswith("subgraph "):
            depth += 1
        elif words == "end":
            depth -= 1
        elif match := re.match(r'(n\d+)\["', words):
            inside[by_id[match.group(1)]] = depth
    branch_depth = {
        "left.fetch": 1,
        "left.x.deep": 2,
        "left.y.inner.z": 2,
        "right.data": 1,
        "solo.solo": 1,
        "solo.more": 1,
    }
    assert inside == {path: branch_depth.get(path, 0) for path in PATHS}
    stripped = [line.strip() for line in lines]
    assert f"class {','.join(paths[p] for p in PATHS)} pending" in stripped
    assert any(line.startswith("classDef pending fill:") for line in stripped)


def test_names_are_escaped_for_each_format(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "odd",
        """
        from rigcli import sequence

        workflows = sequence("odd").task('say "hi" <b>#1</b>\\x1b]0;title\\x07', lambda step: None)
        """,
    )
    mermaid = rig(project, "graph", "--format", "mermaid")
    assert mermaid.returncode == 0, mermaid
    assert 'n0["say #quot;hi#quot; #lt;b#gt;#35;1#lt;/b#gt;' in mermaid.stdout
    assert "\x1b" not in mermaid.stdout and "\x07" not in mermaid.stdout
    (graph,) = pydot.graph_from_dot_data(rig(project, "graph", "--format", "dot").stdout)
    (node,) = [node for node in graph.get_nodes() if node.get_name() not in ("node", "edge", "graph")]
    assert node.get_name() == '"say \\"hi\\" <b>#1</b>"'  # the window-title sequence is gone whole
    tree = rig(project, "graph")
    assert tree.stdout.splitlines()[1].startswith('└── say "hi" <b>#1</b>  pending')


def test_json_and_a_text_format_are_a_usage_error(project: Path) -> None:
    result = rig(project, "--json", "graph", "--format", "mermaid")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.error_lines == ["error: --format mermaid prints a mermaid document; --json prints JSON: choose one"]
    assert rig(project, "--json", "graph", "--format", "tree").returncode == 0
    assert rig(project, "graph", "--format", "png").returncode == 2


def test_completion_knows_graph_and_its_formats(project: Path) -> None:
    def complete(*words: str) -> list[str]:
        result = run_rig("__complete", "--shell", "zsh", "--index", str(len(words) - 1), "--", *words, cwd=project)
        assert result.returncode == 0, result
        return [line.split("\t")[0] for line in result.stdout.splitlines()]

    assert "graph" in complete("rig", "gr")
    assert complete("rig", "graph", "--format", "") == ["tree", "dot", "mermaid"]
    assert "--format" in complete("rig", "graph", "-")


def test_the_docs_mermaid_graph_is_what_rig_graph_prints_for_the_quickstart(tmp_path: Path) -> None:
    project = tmp_path / "quickstart"
    shutil.copytree(
        REPO_ROOT / "examples" / "quickstart", project, ignore=shutil.ignore_patterns(".rig", "__pycache__")
    )
    env = {"NO_COLOR": "1", "RIG_HOME": str(tmp_path / "home"), "RIG_HOST_STORAGE_DIR": str(tmp_path / "storage")}
    assert run_rig("apply", cwd=project, env=env, subprocess=True).returncode == 0
    mermaid = run_rig("graph", "--format", "mermaid", cwd=project, env=env, subprocess=True)
    assert mermaid.returncode == 0, mermaid
    page = (REPO_ROOT / "docs" / "day-two.md").read_text(encoding="utf-8")
    section = page.split("## Seeing a workflow", 1)[1]
    assert f"```mermaid\n{mermaid.stdout}```" in section
