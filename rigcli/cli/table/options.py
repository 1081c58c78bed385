"""The global options, and the arguments and options several commands share."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Option

GLOBAL_OPTIONS = (
    Option(("--chdir", "-C"), "chdir", "Use DIR/rig_config.py (no upward search).", metavar="DIR", complete="dirs"),
    Option(("--config",), "config", "Use this config file.", metavar="FILE", complete="files"),
    Option(
        ("--state",),
        "state",
        "Use this state: a SQLite file or a postgresql:// URL.",
        metavar="FILE|URL",
        complete="files",
    ),
    Option(("--json",), "json", "Print one JSON document on stdout."),
    Option(("--workflow",), "workflow", "Select a workflow.", metavar="W", complete="workflows"),
    Option(("--no-wait",), "no_wait", "Exit with code 4 if the state is locked."),
    Option(
        ("--progress",),
        "progress",
        "How runs are shown: tty (the live view), plain (every line as it comes, prefixed by its task) "
        "or auto (tty on a terminal).",
        choices=("auto", "tty", "plain"),
        default="auto",
    ),
    Option(
        ("--json-stream",),
        "json_stream",
        "Print one JSON object per event on stdout as it happens; the last is the --json document.",
    ),
    # --
    Option(("--version", "-V"), "version", "Print the version.", eager=True),
)

YES = Option(("--yes", "-y"), "yes", "Do not ask for confirmation.")

COLLECT = Option(
    ("--gc",),
    "collect",
    "Then delete the machines and snapshots nothing refers to any more (rig gc); a terminal is asked.",
)

TASK = Argument("task", "TASK", "Task path or name.", complete="tasks")

WORKSPACE = Argument("name", "NAME", "Workspace name.")

WORKSPACES = Argument("names", "WS...", "Workspace names.", variadic=True, complete="workspaces")

START_FIRST = Option(("--start",), "start", "Start the workspace first if it is stopped.")


__all__ = ["COLLECT", "GLOBAL_OPTIONS", "START_FIRST", "TASK", "WORKSPACE", "WORKSPACES", "YES"]
