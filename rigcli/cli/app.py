"""The Typer app: options and arguments in, a command body called, an exit code out. No logic here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from rigcli._version import __version__
from rigcli.cli.argv import hoist
from rigcli.cli.error_handler import finish, print_error, report_internal_error, run_guarded
from rigcli.cli.session import GlobalOptions, Session

GLOBAL_HELP = (
    "Global options (accepted anywhere on the line): -C/--chdir, --config, --state, --json, --workflow, --no-wait."
)
CONTEXT = {"help_option_names": ["-h", "--help"]}
GC_HELP = "Then delete the machines and snapshots nothing refers to any more (rig gc); a terminal is asked."
PASS_THROUGH = {**CONTEXT, "ignore_unknown_options": True, "allow_extra_args": True, "allow_interspersed_args": False}

app = typer.Typer(
    name="rig",
    add_completion=False,
    context_settings=CONTEXT,
    no_args_is_help=False,
    rich_markup_mode=None,
    help="Provision dev machines from a cached workflow of setup tasks, then fork workspaces from it.",
    epilog=GLOBAL_HELP,
)
cache_app = typer.Typer(
    help="Inspect, invalidate and clear the task cache.",
    context_settings=CONTEXT,
    rich_markup_mode=None,
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")
state_app = typer.Typer(
    help="Move the project's state between SQLite and PostgreSQL.",
    context_settings=CONTEXT,
    rich_markup_mode=None,
    no_args_is_help=True,
)
app.add_typer(state_app, name="state")


def _opts(ctx: typer.Context) -> GlobalOptions:
    opts = ctx.find_root().obj
    assert isinstance(opts, GlobalOptions)
    return opts


def _with_options(ctx: typer.Context, body: Callable[[GlobalOptions], int]) -> int:
    opts = _opts(ctx)
    return run_guarded(lambda: body(opts))


def _with_session(ctx: typer.Context, body: Callable[[Session], int]) -> int:
    opts = _opts(ctx)

    def guarded() -> int:
        with Session(opts) as session:
            return body(session)

    return run_guarded(guarded)


def _show_version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    chdir: Annotated[
        str | None, typer.Option("--chdir", "-C", help="Use DIR/rig_config.py (no upward search).", metavar="DIR")
    ] = None,
    config: Annotated[str | None, typer.Option("--config", help="Use this config file.", metavar="FILE")] = None,
    state: Annotated[
        str | None,
        typer.Option("--state", help="Use this state: a SQLite file or a postgresql:// URL.", metavar="FILE|URL"),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
    workflow: Annotated[str | None, typer.Option("--workflow", help="Select a workflow.", metavar="W")] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Exit with code 4 if the state is locked.")] = False,
    version: Annotated[
        bool, typer.Option("--version", "-V", help="Print the version.", is_eager=True, callback=_show_version)
    ] = False,
) -> None:
    ctx.obj = GlobalOptions(chdir=chdir, config=config, state=state, json=json, workflow=workflow, no_wait=no_wait)


@app.command(help="Write a starter rig_config.py (local provider) and ignore .rig/ in git.")
def init(ctx: typer.Context) -> int:
    from rigcli.cli.commands.project import init as body

    return _with_options(ctx, body)


@app.command(help="Show which tasks are cached or pending, and why.")
def plan(ctx: typer.Context) -> int:
    from rigcli.cli.commands.workflow import plan as body

    return _with_session(ctx, body)


@app.command(help="Run the pending tasks of a workflow.")
def apply(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan; change nothing.")] = False,
) -> int:
    from rigcli.cli.commands.workflow import apply as body

    return _with_session(ctx, lambda session: body(session, dry_run=dry_run))


def fork(ctx: typer.Context, name: Annotated[str | None, typer.Argument(help="Workspace name.")] = None) -> int:
    from rigcli.cli.commands.workflow import fork as body

    return _with_session(ctx, lambda session: body(session, name))


app.command("fork", help="Create a workspace from the prepared workflow (alias: create).")(fork)
app.command("create", help="Alias of fork.", hidden=True)(fork)


OP_HELP = """Run a workspace or workflow operation (alias: run).

\b
  rig op WORKSPACE OPERATION [INPUTS]   a workspace operation
  rig op WORKSPACE/OPERATION [INPUTS]   the same, unambiguous
  rig op OPERATION [INPUTS]             a workflow-level operation
  rig op WORKSPACE --help               the workspace's operations
  rig op WORKSPACE OPERATION --help     the operation's inputs
"""


def op(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(hidden=True, metavar="TARGET [INPUTS]")] = None,
) -> int:
    from rigcli.cli.commands.operation import op as body

    return _with_session(ctx, lambda session: body(session, args or []))


# --help reaches the command body, which lists the project's operations (or a workspace's).
OP_CONTEXT = {**PASS_THROUGH, "help_option_names": []}
app.command(
    "op", help=OP_HELP, short_help="Run a workspace or workflow operation (alias: run).", context_settings=OP_CONTEXT
)(op)
app.command("run", help="Alias of op.", hidden=True, context_settings=OP_CONTEXT)(op)


@app.command(help="Remove a workspace (its remove hook runs first), or every workspace with --all.")
def rm(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Workspace name.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Remove every workspace.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Forget the workspace even if its remove hook fails; leftovers go to rig gc."),
    ] = False,
    missing_ok: Annotated[
        bool, typer.Option("--missing-ok", help="A workspace that does not exist is not an error.")
    ] = False,
) -> int:
    from rigcli.cli.commands.workspace import rm as body

    return _with_session(
        ctx, lambda session: body(session, name, all_=all_, yes=yes, force=force, missing_ok=missing_ok)
    )


@app.command(help="List workflows and workspaces, snapshots, or the project's configuration.")
def ls(
    ctx: typer.Context,
    target: Annotated[str | None, typer.Argument(help="workspaces (default), snapshots or config.")] = None,
) -> int:
    from rigcli.cli.commands.listing import ls as body

    return _with_session(ctx, lambda session: body(session, target))


@cache_app.command("ls", help="List cache entries.")
def cache_ls(ctx: typer.Context) -> int:
    from rigcli.cli.commands.cache import cache_ls as body

    return _with_session(ctx, body)


@cache_app.command(help="Explain why tasks are cached or pending.")
def explain(ctx: typer.Context, task: Annotated[str | None, typer.Argument(help="Task path or name.")] = None) -> int:
    from rigcli.cli.commands.cache import explain as body

    return _with_session(ctx, lambda session: body(session, task))


@cache_app.command(help="Mark a task's cached run (and runs built on it) stale, or every task with --all.")
def invalidate(
    ctx: typer.Context,
    task: Annotated[str | None, typer.Argument(help="Task path or name.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Invalidate every task of the workflow.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    collect: Annotated[bool, typer.Option("--gc", help=GC_HELP)] = False,
) -> int:
    from rigcli.cli.commands.cache import invalidate as body

    return _with_session(ctx, lambda session: body(session, task, all_=all_, yes=yes, collect=collect))


@cache_app.command(help="Delete cached runs: local and global, or only one of them.")
def clear(
    ctx: typer.Context,
    local: Annotated[bool, typer.Option("--local", help="Only this project's cache.")] = False,
    global_: Annotated[bool, typer.Option("--global", help="Only global fragment caches.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    collect: Annotated[bool, typer.Option("--gc", help=GC_HELP)] = False,
) -> int:
    from rigcli.cli.commands.cache import clear as body

    return _with_session(ctx, lambda session: body(session, local=local, global_=global_, yes=yes, collect=collect))


@app.command(help="Delete machines, snapshots, containers and images that nothing refers to (no confirmation).")
def gc(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be deleted; delete nothing.")] = False,
) -> int:
    from rigcli.cli.commands.gc import gc as body

    return _with_session(ctx, lambda session: body(session, dry_run=dry_run))


@app.command(help="Manage a provider's per-user state: rig providers PROVIDER clear.")
def providers(
    ctx: typer.Context,
    provider: Annotated[str, typer.Argument(help="Provider id, e.g. local or docker.")],
    action: Annotated[str, typer.Argument(help="clear: forget the provider's host storage.")],
) -> int:
    from rigcli.cli.commands.project import providers as body

    return _with_options(ctx, lambda opts: body(opts, provider, action))


@app.command(help="Find rig projects at or below the current directory.")
def projects(ctx: typer.Context) -> int:
    from rigcli.cli.commands.project import projects as body

    return _with_options(ctx, body)


@state_app.command(
    "copy",
    help="Copy the project's state (runs, workspaces, provider storage, effects, "
    "metadata) into an empty SQLite file or PostgreSQL schema; the source is only read.",
)
def state_copy(
    ctx: typer.Context,
    to: Annotated[
        str, typer.Option("--to", help="The target: a SQLite file or a postgresql:// URL.", metavar="URL_OR_PATH")
    ],
) -> int:
    from rigcli.cli.commands.state import copy as body

    return _with_options(ctx, lambda opts: body(opts, to))


@app.command(help="Show versions, paths, the project, its state backend and lock, and Docker reachability.")
def doctor(ctx: typer.Context) -> int:
    from rigcli.cli.commands.doctor import doctor as body

    return _with_options(ctx, body)


@app.command(help="Print a shell completion script (bash, zsh or fish; default from $SHELL).")
def completion(
    ctx: typer.Context, shell: Annotated[str | None, typer.Argument(help="bash, zsh or fish.")] = None
) -> int:
    from rigcli.cli.complete_scripts import print_script

    return _with_options(ctx, lambda opts: print_script(shell))


@app.command(help="Print the version.")
def version(ctx: typer.Context) -> int:
    from rigcli.cli.commands.project import version as body

    return _with_options(ctx, body)


@app.command("help", help="Show help for rig or one of its commands.")
def help_command(command: Annotated[list[str] | None, typer.Argument(help="Command.")] = None) -> int:
    return run([*(command or []), "--help"])


# Every command's --help ends with the global options, which Typer only shows on the root.
for _info in [*app.registered_commands, *cache_app.registered_commands, *state_app.registered_commands]:
    _info.epilog = _info.epilog or GLOBAL_HELP


def run(argv: list[str]) -> int:
    """Parse and run one command line; every failure becomes an exit code and one stderr line."""
    args = hoist(argv).argv
    if not args:
        args = ["--help"]
    command = typer.main.get_command(app)
    try:
        result: Any = command.main(args=args, prog_name="rig", standalone_mode=False)
    except typer.TyperException as exc:  # click usage errors, vendored by Typer
        if type(exc).__name__ == "NoArgsIsHelpError":  # `rig cache` alone: its help, not an error
            print(exc.format_message())
            return 0
        print_error(exc.format_message())
        return int(getattr(exc, "exit_code", 2))
    except typer.Abort:
        print_error("Cancelled")
        return 1
    except Exception as exc:
        return report_internal_error(exc, argv=argv)
    return finish(result if isinstance(result, int) else 0)


__all__ = ["app", "run"]
