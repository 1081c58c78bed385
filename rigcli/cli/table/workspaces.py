"""Rows of the commands about workspaces: rm, ls, shell, exec, stop, start, diff, reap."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, Option
from rigcli.cli.table.options import START_FIRST, WORKSPACE, WORKSPACES, YES

RM = Command(
    "rm",
    "Remove workspaces (each one's remove hook runs first), or every workspace with --all.",
    "rigcli.cli.commands.workspace:rm",
    arguments=(WORKSPACES.replace(metavar="NAME..."),),
    options=(
        Option(("--all",), "all_", "Remove every workspace."),
        YES,
        Option(("--force",), "force", "Forget the workspace even if its remove hook fails; leftovers go to rig gc."),
        Option(("--missing-ok",), "missing_ok", "A workspace that does not exist is not an error."),
        Option(
            ("--forget",),
            "forget",
            "Skip the remove hook (say, rig_config.py does not load): remove the machines the state "
            "recorded for the workspace, then its record.",
        ),
    ),
    hot=True,
)

LS = Command(
    "ls",
    "List workflows and workspaces, snapshots, or the project's configuration.",
    "rigcli.cli.commands.listing:ls",
    arguments=(
        Argument(
            "target",
            "TARGET",
            "workspaces (default), snapshots or config.",
            suggest=(
                ("workspaces", "workflows and their workspaces"),
                ("snapshots", "recorded snapshots"),
                ("config", "the project's configuration"),
            ),
        ),
    ),
    options=(
        Option(
            ("--no-probe",),
            "no_probe",
            "Do not ask providers for each workspace's live status (live is null in --json).",
        ),
    ),
    hot=True,
    cache=("listing",),
)

SHELL = Command(
    "shell",
    "Open a shell inside a workspace, on this terminal; rig exits with the shell's exit code "
    "(a project's own shell operation runs instead, when it defines one).",
    "rigcli.cli.commands.attach:shell",
    arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
    options=(START_FIRST,),
    hot=True,
    cache=("config",),
)

EXEC = Command(
    "exec",
    "Run a command inside a workspace (rig exec WS -- CMD ARGS) with this terminal or these "
    "streams, and exit with its exit code (a project's own exec operation runs instead, when it defines one).",
    "rigcli.cli.commands.attach:exec_",
    arguments=(
        WORKSPACE.replace(required=True, complete="workspaces"),
        Argument("argv", "CMD [ARG...]", "The program and its arguments, after --.", required=True, variadic=True),
    ),
    options=(START_FIRST,),
    hot=True,
    cache=("config",),
)

STOP = Command(
    "stop",
    "Stop workspaces' machines, keeping their files (rig start runs them again); --all stops every workspace.",
    "rigcli.cli.commands.power:stop",
    arguments=(WORKSPACES,),
    options=(Option(("--all",), "all_", "Stop every workspace."),),
    hot=True,
)

START = Command(
    "start",
    "Start stopped workspaces' machines again; --all starts every workspace.",
    "rigcli.cli.commands.power:start",
    arguments=(WORKSPACES,),
    options=(Option(("--all",), "all_", "Start every workspace."),),
    hot=True,
)

DIFF = Command(
    "diff",
    "Say why a workspace is outdated: the tasks the workflow would now run differently, and why.",
    "rigcli.cli.commands.drift:diff",
    arguments=(WORKSPACE.replace(required=True, complete="workspaces"),),
    hot=True,
)

REAP = Command(
    "reap",
    "Remove expired workspaces and stop idle ones now (every rig command also does, cheaply).",
    "rigcli.cli.commands.drift:reap",
    options=(Option(("--dry-run",), "dry_run", "List what would be removed or stopped; change nothing."),),
)


__all__ = ["DIFF", "EXEC", "LS", "REAP", "RM", "SHELL", "START", "STOP"]
