"""The table can say the day-two command line (DESIGN §11), and both readers of it agree on every line.

A copy of the table grows the commands and global options DESIGN §11 names that rig does not have
yet (one it has is checked as it is), the Typer app and the fast path are built from that copy,
and the parity check runs on it. Bodies are named but never called.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from rigcli.cli.argv import match
from rigcli.cli.spec import Argument, Command, Option, Table
from rigcli.cli.table import TABLE
from tests.cli.table_lines import argv_lines, fast_path, mismatches, typer_calls

BODY = "rigcli.cli.commands.workflow:plan"  # never called: the check captures the call
WS = Argument("name", "WS", "Workspace name.", required=True, complete="workspaces")
SOME = Argument("names", "WS", "Workspace names.", variadic=True, complete="workspaces")
ALL = Option(("--all",), "all_", "Every workspace.")
DRY_RUN = Option(("--dry-run",), "dry_run", "Change nothing.")
FOLLOW = Option(("--follow", "-f"), "follow", "Keep reading.")


class DayTwoOptions(NamedTuple):
    chdir: str | None = None
    config: str | None = None
    state: str | None = None
    json: bool = False
    workflow: str | None = None
    no_wait: bool = False
    progress: str = "auto"
    json_stream: bool = False


DESIGN_GLOBALS = (
    Option(("--progress",), "progress", "How progress is shown.", choices=("auto", "tty", "plain"), default="auto"),
    Option(("--json-stream",), "json_stream", "One JSON event per line, the summary last."),
)
# The table's own, and those DESIGN names that it does not have yet.
GLOBALS = (
    *TABLE.options,
    *(option for option in DESIGN_GLOBALS if option.dest not in {known.dest for known in TABLE.options}),
)

NEW = (
    Command("shell", "A shell inside the workspace.", BODY, arguments=(WS,), hot=True),
    Command(
        "exec",
        "Run a command inside the workspace.",
        BODY,
        arguments=(WS, Argument("argv", "CMD [ARG...]", "The command.", required=True, variadic=True)),
        hot=True,
    ),
    Command("stop", "Stop workspaces.", BODY, arguments=(SOME,), options=(ALL,), hot=True),
    Command("start", "Start workspaces.", BODY, arguments=(SOME,), options=(ALL,), hot=True),
    Command("diff", "Why the workspace is outdated.", BODY, arguments=(WS,), hot=True),
    Command(
        "reap", "Remove or stop what expired.", BODY, options=(Option(("--dry-run",), "dry_run", "Change nothing."),)
    ),
    Command(
        "logs",
        "Stored output of the last run of a task.",
        BODY,
        arguments=(Argument("task", "TASK", "Task path.", complete="tasks"),),
        options=(
            Option(("--run",), "run", "This run.", metavar="ID"),
            Option(("--follow", "-f"), "follow", "Keep reading."),
        ),
        hot=True,
    ),
    Command(
        "runs",
        "Run history.",
        BODY,
        arguments=(Argument("run", "RUN", "The run (with --timeline)."),),
        options=(
            Option(("--timeline",), "timeline", "The run's timeline."),
            Option(("--stats",), "stats", "Per-task statistics."),
            Option(("--format",), "format", "Write a picture.", metavar="svg FILE", arity=2),
        ),
        hot=True,
    ),
    Command(
        "graph",
        "The workflow as a picture.",
        BODY,
        options=(Option(("--format",), "format", "Picture format.", choices=("tree", "dot", "mermaid")),),
        hot=True,
    ),
)

GROWN = {
    "plan": (Option(("--detailed-exitcode",), "detailed_exitcode", "Exit 2 when something is pending."),),
    "apply": (
        Option(("--expect-cached",), "expect_cached", "Run nothing; exit 5 when something is pending."),
        Option(("--only",), "only", "This task and its pending upstream.", metavar="TASK", repeat=True),
    ),
    "fork": (
        Option(("--replace",), "replace", "Remake NAME from the current snapshot."),
        Option(("--from",), "source", "Fork a live workspace.", metavar="WS", complete="workspaces"),
        Option(("--count", "-n"), "count", "NAME-1 ... NAME-N.", metavar="N", kind="int"),
        Option(("--ttl",), "ttl", "Expiry.", metavar="DURATION"),
    ),
    "ls": (Option(("--no-probe",), "no_probe", "Do not probe live status."),),
    "gc": (Option(("--forget-unreachable",), "forget_unreachable", "Forget what no provider can reach."),),
}
STATE_MORE = (
    Command("check", "Check the state.", BODY, hot=True),
    Command("recover", "Recover the state.", BODY, hot=True),
)


def day_two_table() -> Table:
    """The table as it is, grown by what DESIGN §11 names and it does not have yet (what rig has
    already is checked as rig has it)."""
    commands = []
    for command in TABLE.commands:
        if command.name in GROWN:
            have = {option.dest for option in command.options}
            spelled = {spelling for option in command.options for spelling in option.spellings}
            more = tuple(
                option
                for option in GROWN[command.name]
                if option.dest not in have and not spelled & set(option.spellings)
            )
            command = command.replace(options=(*command.options, *more), hot=True)
        if command.name == "state":
            wanted = {sub.name for sub in STATE_MORE}  # hot here, as STATE_MORE has them, whoever says them
            own = tuple(sub.replace(hot=True) if sub.name in wanted else sub for sub in command.commands)
            more = tuple(sub for sub in STATE_MORE if sub.name not in {own_sub.name for own_sub in own})
            command = command.replace(commands=(*own, *more))
        commands.append(command)
    new = tuple(command for command in NEW if TABLE.root.subcommand(command.name) is None)
    return TABLE.replace(options=GLOBALS, commands=(*commands, *new), options_type=DayTwoOptions)


@pytest.fixture(scope="module")
def table() -> Table:
    return day_two_table()


def test_both_readers_agree_on_every_day_two_line(table: Table) -> None:
    lines = argv_lines(table)
    problems = mismatches(typer_calls(table, lines), fast_path(table))
    assert not problems, "\n".join(problems[:30])
    assert len(lines) > 4000


@pytest.mark.parametrize(
    ("words", "kwargs", "opts"),
    [
        (["exec", "dev", "--", "ls", "-la", "--json"], {"name": "dev", "argv": ("ls", "-la", "--json")}, {}),
        (["--progress=plain", "stop", "--all"], {"names": (), "all_": True}, {"progress": "plain"}),
        (["stop", "a", "b", "--json-stream"], {"names": ("a", "b"), "all_": False}, {"json_stream": True}),
        (
            ["fork", "x", "--from", "dev", "-n3", "--ttl", "8h", "--replace"],
            {"name": "x", "source": "dev", "count": 3, "ttl": "8h", "replace": True},
            {},
        ),
        (["apply", "--only", "a", "--only", "b"], {"dry_run": False, "expect_cached": False, "only": ("a", "b")}, {}),
        (
            ["runs", "--timeline", "r1", "--format", "svg", "t.svg"],
            {"run": "r1", "timeline": True, "stats": False, "format": ("svg", "t.svg")},
            {},
        ),
        (["graph", "--format", "dot"], {"format": "dot"}, {}),
        (["state", "recover"], {}, {}),
    ],
)
def test_day_two_lines_mean_what_design_says(
    table: Table, words: list[str], kwargs: dict[str, object], opts: dict[str, object]
) -> None:
    call = match(words, table)
    assert call is not None
    assert {name: call.kwargs[name] for name in kwargs} == kwargs
    assert call.opts == DayTwoOptions(**opts)
    assert type(call.opts) is DayTwoOptions


@pytest.mark.parametrize(
    "words",
    [["exec", "dev"], ["graph", "--format", "png"], ["fork", "x", "--count", "many"], ["--progress", "loud", "plan"]],
)
def test_day_two_mistakes_go_to_typer(table: Table, words: list[str]) -> None:
    assert match(words, table) is None
    (call, said), *_ = typer_calls(table, [tuple(words)]).values()
    assert call is None and said.startswith("error: ")
