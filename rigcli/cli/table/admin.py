"""Rows of the housekeeping commands: gc, state, providers, projects, doctor, completion, version, help."""

from __future__ import annotations

from rigcli.cli.spec import Argument, Command, Option

GC = Command(
    "gc",
    "Delete machines, snapshots, containers and images that nothing refers to (no confirmation).",
    "rigcli.cli.commands.gc:gc",
    options=(
        Option(("--dry-run",), "dry_run", "List what would be deleted; delete nothing."),
        Option(
            ("--forget-unreachable",),
            "forget_unreachable",
            "Mark what no daemon can be asked about (gone, or not the one that made it) forgotten, "
            "with the reason, instead of failing.",
        ),
    ),
)

STATE = Command(
    "state",
    "Move the project's state between SQLite and PostgreSQL; check and recover a damaged state file.",
    commands=(
        Command(
            "copy",
            "Copy the project's state (runs, workspaces, provider storage, effects, metadata) into an empty "
            "SQLite file or PostgreSQL schema; the source is only read.",
            "rigcli.cli.commands.state:copy",
            needs="options",
            options=(
                Option(
                    ("--to",),
                    "to",
                    "The target: a SQLite file or a postgresql:// URL.",
                    metavar="URL_OR_PATH",
                    required=True,
                    complete="files",
                ),
            ),
        ),
        Command(
            "check",
            "Run SQLite's integrity check on the project's state file; exit 1 if it is damaged.",
            "rigcli.cli.commands.state:check",
            needs="options",
        ),
        Command(
            "recover",
            "Salvage a damaged state file into a new one that the project then uses; the damaged one is kept "
            "beside it.",
            "rigcli.cli.commands.state:recover",
            needs="options",
        ),
    ),
)

PROVIDERS = Command(
    "providers",
    "Manage a provider's per-user state: rig providers PROVIDER clear.",
    "rigcli.cli.commands.project:providers",
    needs="options",
    arguments=(
        Argument("provider_id", "PROVIDER", "Provider id, e.g. local or docker.", required=True, complete="providers"),
        Argument(
            "action",
            "ACTION",
            "clear: forget the provider's host storage.",
            required=True,
            suggest=(("clear", "forget this provider's host storage"),),
        ),
    ),
)

PROJECTS = Command(
    "projects",
    "Find rig projects at or below the current directory.",
    "rigcli.cli.commands.project:projects",
    needs="options",
)

DOCTOR = Command(
    "doctor",
    "Show versions, paths, the project, its state backend and lock, and Docker reachability.",
    "rigcli.cli.commands.doctor:doctor",
    needs="options",
)

COMPLETION = Command(
    "completion",
    "Print a shell completion script, or install it (bash, zsh or fish; default from $SHELL).",
    "rigcli.cli.complete_scripts:completion",
    needs="options",
    arguments=(
        Argument(
            "shell",
            "SHELL|install",
            "bash, zsh or fish; or install, to install the script where the shell finds it.",
            suggest=(
                ("bash", "shell"),
                ("zsh", "shell"),
                ("fish", "shell"),
                ("install", "install the script for $SHELL (or the shell named next)"),
            ),
        ),
        # -- rig completion install [SHELL] (issue 19, item 8) --
        Argument("target", "SHELL", "With install: the shell (default from $SHELL).", hidden=True),
    ),
    examples=(
        ("rig completion install", "install completion for the shell you use ($SHELL)"),
        ("rig completion zsh > _rig", "write the zsh script yourself"),
    ),
)

VERSION = Command("version", "Print the version.", "rigcli.cli.commands.project:version", needs="options", hot=True)

HELP = Command(
    "help",
    "Show help for rig or one of its commands (--json: the commands as JSON).",
    "rigcli.cli.commands.help:help_command",
    needs="options",
    arguments=(Argument("command", "COMMAND", "Command.", variadic=True, complete="commands"),),
    hot=True,
)


__all__ = ["COMPLETION", "DOCTOR", "GC", "HELP", "PROJECTS", "PROVIDERS", "STATE", "VERSION"]
