"""Rows of the commands that evaluate a workflow: init, plan, apply, fork, op."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, Option
from rigcli.cli.table.options import WORKSPACE

MAX_FORKS = 100  # rig fork --count: the engine's own bound (engine/forks.py MAX_COUNT; a test holds them equal)

INIT = Command(
    "init",
    "Write a starter rig_config.py (local provider) and ignore .rig/ in git.",
    "rigcli.cli.commands.project:init",
    needs="options",
    # -- newcomer warts (issue 19, item 8) --
    options=(
        Option(
            ("--template",),
            "template",
            "local: machines are directories (no isolation); docker: containers from a local image, never pulled.",
            choices=("local", "docker"),
            default="local",
        ),
        Option(
            ("--devcontainer",),
            "devcontainer",
            "Write the rig_config.py this directory's devcontainer.json configurations stand for, to extend.",
        ),
    ),
)

PLAN = Command(
    "plan",
    "Show which tasks are cached or pending, and why.",
    "rigcli.cli.commands.plan:plan",
    # -- CI gates (issue 19, item 4) --
    options=(
        Option(
            ("--detailed-exitcode",),
            "detailed_exitcode",
            "Exit 0 when nothing is pending, 2 when something is, 1 on any error (usage errors too).",
            error_code=1,
        ),
    ),
    hot=True,
    cache=("plan",),
)

APPLY = Command(
    "apply",
    "Run the pending tasks of a workflow.",
    "rigcli.cli.commands.workflow:apply",
    # -- the extra words of `--only A B` (issue 19, item 7) --
    arguments=(Argument("extra_only", "TASK", "More tasks for --only.", variadic=True, hidden=True),),
    options=(
        Option(("--dry-run",), "dry_run", "Show the plan; change nothing."),
        # -- CI gates and --only (issue 19, items 4 and 7) --
        Option(
            ("--expect-cached",),
            "expect_cached",
            "Run nothing and exit 5, naming each pending task and why, unless every task is cached.",
        ),
        Option(
            ("--only",),
            "only",
            "Run only TASK and the pending tasks upstream of it, nothing downstream (repeatable).",
            metavar="TASK",
            repeat=True,
            complete="tasks",
        ),
    ),
    hot=True,
    examples=(
        ("rig apply --only build test", "build and test, and what they need; nothing after them"),
        ("rig apply --expect-cached", "fail (exit 5) in CI when anything would run"),
    ),
)

FORK = Command(
    "fork",
    "Create a workspace from the prepared workflow.",
    "rigcli.cli.commands.workflow:fork",
    arguments=(WORKSPACE,),
    options=(
        # -- day two: forks of several, of a live one, in place, with an expiry --------------------
        Option(
            ("--replace",),
            "replace",
            "Remake NAME from the current snapshot; the old machine is removed once the new one is ready. "
            "What was changed in it since it was made is listed first, and a terminal is asked.",
        ),
        Option(("--yes", "-y"), "yes", "Replace without asking, losing what changed in the workspace."),
        Option(
            ("--from",),
            "source",
            "Fork the live workspace WS: its machine snapshotted as it is now.",
            metavar="WS",
            complete="workspaces",
        ),
        Option(
            ("--count", "-n"),
            "count",
            f"Make NAME-1 ... NAME-N at once (N: 1 to {MAX_FORKS}).",
            metavar="N",
            kind="int",
            minimum=1,
            maximum=MAX_FORKS,
        ),
        Option(
            ("--ttl",),
            "ttl",
            'Remove the workspace that long after it is made (e.g. "8h"; overrides workspace(ttl=...)).',
            metavar="DURATION",
        ),
    ),
    aliases=("create",),
    hot=True,
)

OP = Command(
    "op",
    "Run a workspace or workflow operation.",
    "rigcli.cli.commands.operation:op",
    arguments=(Argument("args", "TARGET [INPUTS]", "", variadic=True, complete="operation", hidden=True),),
    aliases=("run",),
    hot=True,
    pass_through=True,
    examples=(
        ("rig op WORKSPACE OPERATION [INPUTS]", "a workspace operation"),
        ("rig op WORKSPACE/OPERATION [INPUTS]", "the same, unambiguous"),
        ("rig op OPERATION [INPUTS]", "a workflow-level operation"),
        ("rig op WORKSPACE --help", "the workspace's operations"),
        ("rig op WORKSPACE OPERATION --help", "the operation's inputs"),
    ),
)


__all__ = ["APPLY", "FORK", "INIT", "MAX_FORKS", "OP", "PLAN"]
