"""The commands people run all day (plan, apply, fork), dispatched without assembling the Typer app.

Importing Typer (and the pydantic it brings) costs more than a cached ``rig plan`` itself, so
these command lines are recognised here and run through the same command bodies, options,
error handler and exit codes as under Typer. Anything else — help, unknown options, other
commands — returns None and goes to the full CLI, which stays the one place the CLI is defined.
"""

from __future__ import annotations

from collections.abc import Callable

from rigcli.cli.argv import hoist
from rigcli.cli.error_handler import finish, run_guarded
from rigcli.cli.session import GlobalOptions, Session

CommandBody = Callable[[Session], int]


def _plan(session: Session) -> int:
    from rigcli.cli.commands.workflow import plan

    return plan(session)


def _apply(session: Session) -> int:
    from rigcli.cli.commands.workflow import apply

    return apply(session)


def _dry_run(session: Session) -> int:
    from rigcli.cli.commands.workflow import apply

    return apply(session, dry_run=True)


# Exactly these words after the global options; `rig plan --help` and the like go to Typer.
HOT_COMMANDS: dict[tuple[str, ...], CommandBody] = {
    ("plan",): _plan,
    ("apply",): _apply,
    ("apply", "--dry-run"): _dry_run,
}


def _fork_body(words: list[str]) -> CommandBody | None:
    """``fork NAME`` / ``create NAME`` with a plain name; options and prompts go to Typer."""
    if len(words) != 2 or words[0] not in ("fork", "create") or words[1].startswith("-"):
        return None
    name = words[1]

    def fork(session: Session) -> int:
        from rigcli.cli.commands.workflow import fork as body

        return body(session, name)

    return fork


def dispatch(argv: list[str]) -> int | None:
    """Run a hot command line and return its exit code, or None when Typer should handle it."""
    hoisted = hoist(argv)
    body = HOT_COMMANDS.get(tuple(hoisted.rest)) or _fork_body(hoisted.rest)
    if body is None or hoisted.values.get("version"):
        return None
    values = hoisted.values
    opts = GlobalOptions(
        chdir=_text(values.get("chdir")),
        config=_text(values.get("config")),
        state=_text(values.get("state")),
        json=bool(values.get("json")),
        workflow=_text(values.get("workflow")),
        no_wait=bool(values.get("no_wait")),
    )

    def guarded() -> int:
        with Session(opts) as session:
            return body(session)

    return finish(run_guarded(guarded, argv=argv))


def _text(value: str | bool | None) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["HOT_COMMANDS", "dispatch"]
