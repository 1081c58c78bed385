"""Rows of the commands about the cache and what ran: cache, graph, runs, logs."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, Option
from rigcli.cli.table.options import COLLECT, TASK, YES

CACHE = Command(
    "cache",
    "Inspect, invalidate and clear the task cache.",
    commands=(
        Command("ls", "List cache entries.", "rigcli.cli.commands.cache:cache_ls"),
        Command(
            "explain",
            "Explain why tasks are cached or pending.",
            "rigcli.cli.commands.cache:explain",
            arguments=(TASK,),
        ),
        Command(
            "invalidate",
            "Mark a task's cached run (and runs built on it) stale, or every task with --all.",
            "rigcli.cli.commands.cache:invalidate",
            arguments=(TASK.replace(complete="valid-tasks"),),
            options=(Option(("--all",), "all_", "Invalidate every task of the workflow."), YES, COLLECT),
        ),
        Command(
            "clear",
            "Delete cached runs: local and global, or only one of them.",
            "rigcli.cli.commands.cache:clear",
            options=(
                Option(("--local",), "local", "Only this project's cache."),
                Option(("--global",), "global_", "Only global fragment caches."),
                YES,
                COLLECT,
            ),
        ),
    ),
)

# rig runs --limit/--last: more applies than anyone reads, and a number every state database takes.
MAX_APPLIES = 1_000_000

# -- pictures: rig graph ------------------------------------------------------------------------
GRAPH = Command(
    "graph",
    "Show the workflow as a graph: a tree of its tasks with their cache status, or Graphviz DOT or Mermaid.",
    "rigcli.cli.commands.pictures:graph",
    options=(
        Option(
            ("--format",),
            "format",
            "tree (default), dot (Graphviz) or mermaid (renders in Markdown).",
            choices=("tree", "dot", "mermaid"),
        ),
    ),
    hot=True,
    cache=("plan",),
    examples=(
        ("rig graph", "the tree, with each task's cache status and reason"),
        ("rig graph --format dot | dot -Tsvg > graph.svg", "a picture with Graphviz"),
        ("rig graph --format mermaid", "a flowchart to paste into a README or a pull request"),
        ("rig --json graph", "nodes and edges as JSON"),
    ),
)

RUNS = Command(
    "runs",
    "Show the history of applies, one apply's tasks, where its time went (--timeline) or how each task "
    "fares across applies (--stats).",
    "rigcli.cli.commands.runs:runs",
    arguments=(Argument("run", "RUN", "The apply: its id, or 4 or more of its first characters; default: the last."),),
    options=(
        Option(("--timeline",), "timeline", "The apply as a timeline: a bar per task, the critical path marked."),
        Option(("--stats",), "stats", "Per task: runs, cache hit rate, median and p95 duration."),
        Option(
            ("--format",),
            "format",
            "Write the timeline to FILE as a standalone SVG picture (- for stdout); an existing FILE is refused.",
            metavar="svg FILE",
            arity=2,
            complete="files",
        ),
        Option(("--force",), "force", "With --format svg FILE: overwrite FILE if it exists."),
        Option(
            ("--last",),
            "last",
            f"How many applies --stats covers (1 to {MAX_APPLIES}).",
            metavar="N",
            kind="int",
            default=20,
            minimum=1,
            maximum=MAX_APPLIES,
        ),
        # -- the history (no --timeline/--stats) --
        Option(
            ("--limit", "-n"),
            "limit",
            f"How many applies the history shows (1 to {MAX_APPLIES}).",
            metavar="N",
            kind="int",
            default=20,
            minimum=1,
            maximum=MAX_APPLIES,
        ),
    ),
    hot=True,
    examples=(
        ("rig runs --timeline", "the last apply: a bar per task on one time axis"),
        ("rig runs --timeline 1f2e3d4c --format svg apply.svg", "that apply as an SVG picture"),
        ("rig runs --stats --last 50", "runs, cache hits, median and p95 per task"),
    ),
)

LOGS = Command(
    "logs",
    "Show the stored output of a task's last run, or of every run of the last apply.",
    "rigcli.cli.commands.history:logs",
    arguments=(TASK,),
    options=(
        Option(
            ("--run",),
            "run",
            "A run's or an apply's id, or 4 or more of its first characters.",
            metavar="ID",
        ),
        Option(("--follow", "-f"), "follow", "Keep printing a run in progress until it ends."),
        Option(
            ("--workspace",),
            "workspace",
            "The output of the workspace's latest history entry (its create hook, rm, an operation, "
            "stop, start); --run ID picks another (rig runs lists them).",
            metavar="WS",
            complete="workspaces",
        ),
    ),
    hot=True,
    cache=("config",),
)


__all__ = ["CACHE", "GRAPH", "LOGS", "MAX_APPLIES", "RUNS"]
