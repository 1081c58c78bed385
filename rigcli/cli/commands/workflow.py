"""plan, apply and fork: the commands that evaluate a workflow."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, TypeVar

from rigcli.authoring.project import check_workspace_name
from rigcli.authoring.ttl import parse_lifetime
from rigcli.cli.commands.workspace import confirm_destructive
from rigcli.cli.output import emit_json, stderr_is_terminal, stdout_is_terminal
from rigcli.cli.session import Session
from rigcli.errors import ConfigError, PendingWorkError, RigError, UsageError
from rigcli.records import WorkspaceRecord
from rigcli.render.prompts import text
from rigcli.render.tables import print_message, print_next_steps, print_plan
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import secrets

    from rigcli.engine.replace_loss import ReplaceLoss
    from rigcli.engine.results import ApplyResult
else:
    secrets = lazy_module("secrets")  # a default name for a terminal user (it imports random and hashlib)

T = TypeVar("T")


def apply(
    session: Session,
    *,
    dry_run: bool = False,
    expect_cached: bool = False,
    only: tuple[str, ...] = (),
    extra_only: tuple[str, ...] = (),
) -> int:
    engine = session.engine
    if extra_only and not only:
        raise UsageError(
            f"Got unexpected extra argument ({extra_only[0]}); to run only some tasks: rig apply --only TASK"
        )
    targets = tuple(name for word in (*only, *extra_only) for name in word.split(",") if name)
    if dry_run:
        result = session.with_workflow(
            lambda workflow: session.run(engine.planner.apply(workflow=workflow, dry_run=True))
        )
        if session.opts.json:
            emit_json(result.to_json())
            return 0

        print_plan(result.plan.to_json())
        print_message("No changes applied.", style="dim", err=False)
        return 0

    def run(workflow: str | None) -> ApplyResult:
        with session.watch():
            return session.run(engine.planner.apply(workflow=workflow, expect_cached=expect_cached, only=targets))

    try:
        applied = session.with_workflow(run)
    except PendingWorkError as exc:
        if session.opts.json:  # the answer CI asked for: what is pending and why (the error line goes to stderr)
            emit_json(exc.document)
        raise
    if session.opts.json:
        emit_json(applied.to_json())
    return 0


def _ask_name(workflow: str) -> str:
    def problem(value: str) -> str | None:
        try:
            check_workspace_name(value)
        except RigError as exc:
            return str(exc)
        return None

    return text("Workspace name", default=f"{workflow}-{secrets.token_hex(2)}", validate=problem)


def fork(
    session: Session,
    name: str | None,
    *,
    replace: bool = False,
    source: str | None = None,
    count: int | None = None,
    ttl: str | None = None,
    yes: bool = False,
) -> int:
    # The engine checks the name itself before it takes the lock or applies anything.
    if count is not None and (replace or source is not None):
        raise UsageError("--count makes new workspaces; it cannot be combined with --replace or --from")
    if replace and source is not None:
        raise UsageError("--replace remakes NAME from the current snapshot; it cannot be combined with --from")
    seconds = _ttl_seconds(ttl)
    if name is None and not session.opts.interactive:
        raise UsageError("fork requires a workspace name: rig fork NAME")
    session.expect_project_code()  # the workspace's create hook
    picked: str | None = None
    if name is None:  # the default name says which workflow it is made from
        picked = session.workflow()
        name = _ask_name(picked)
    given = name
    engine = session.engine

    def with_workflow(call: Callable[[str | None], T]) -> T:
        return call(picked) if picked is not None else session.with_workflow(call)

    if count is not None:
        many = with_workflow(lambda wf: _watched(session, engine.forks.fork_many(given, count, wf, ttl=seconds)))
        return _print_forks(session, many)
    if source is not None:  # the workflow is the source workspace's
        record = _watched(session, engine.forks.fork_from(given, source, picked or session.opts.workflow, ttl=seconds))
    elif replace:
        if not yes:
            with_workflow(lambda wf: _confirm_loss(session, session.run(engine.forks.replace_loss(given, wf))))
        record = with_workflow(lambda wf: _watched(session, engine.forks.replace(given, wf, ttl=seconds)))
    else:
        record = with_workflow(
            lambda wf: _watched(session, engine.workspaces.fork(name=given, workflow=wf, ttl=seconds))
        )
    if session.opts.json:
        emit_json(record)
        return 0
    if not stdout_is_terminal():
        # So that `name=$(rig fork ...)` works.
        print(record.name, flush=True)
    if stderr_is_terminal():
        _next_steps(session, record.name, record.workflow)
    return 0


def _ttl_seconds(ttl: str | None) -> float | None:
    """``--ttl 8h`` in seconds: a duration as ``cache_ttl`` takes it, positive (exit 2 otherwise)."""
    if ttl is None:
        return None

    try:
        return parse_lifetime(ttl, "--ttl")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _watched(session: Session, coro: Coroutine[object, object, T]) -> T:
    with session.watch():
        return session.run(coro)


def _print_forks(session: Session, records: list[WorkspaceRecord]) -> int:
    """``--count``: the records as a JSON list, or the names one per line (on stdout, terminal or not)."""
    if session.opts.json:
        emit_json(records)
        return 0
    for record in records:
        print(record.name, flush=True)
    return 0


SHOWN_CHANGES = 10  # of what a replace would lose, the first few by name; the rest counted


def _confirm_loss(session: Session, loss: ReplaceLoss | None) -> None:
    """Before ``fork --replace``: what the workspace would lose, and a terminal's yes (else --yes)."""
    if loss is None or loss.nothing_lost:
        return
    name, changes = loss.workspace, loss.changes
    lines = [f"Workspace {name} changed since it was made; replacing it throws away:"] if changes else []
    lines += [f"  {change.kind:<8} {change.path}" for change in changes[:SHOWN_CHANGES]]
    if len(changes) > SHOWN_CHANGES:
        lines.append(f"  … and {len(changes) - SHOWN_CHANGES} more")
    lines += [
        f"rig cannot tell what would be lost in machine {item.machine}: {item.unknown}"
        for item in loss.machines
        if item.unknown
    ]
    print_message("\n".join(lines), style="yellow")
    if changes:
        listed = ", ".join(change.path for change in changes[:3]) + (", …" if len(changes) > 3 else "")
        note = f"workspace {name} would lose {len(changes)} change{'' if len(changes) == 1 else 's'}: {listed}"
    else:
        note = f"rig cannot tell what workspace {name} would lose"
    confirm_destructive(
        session,
        f"Replace workspace {name} and lose {'these changes' if changes else 'whatever changed in it'}?",
        yes=False,
        command="fork --replace",
        note=note,
        kept=f"Kept workspace {name} as it is",
    )


def _next_steps(session: Session, name: str, workflow: str) -> None:
    # rig shell/exec run the project's own shell/exec operation when it has one: listed once, as rig's.
    steps = [(f"rig shell {name}", "Open a shell in it"), (f"rig exec {name} -- CMD", "Run a command in it")]
    steps += [
        (f"rig op {name} {info.id}", info.description or info.title or "")
        for info in session.engine.operations.list_workspace_operations(workflow)
        if info.id not in ("remove", "shell", "exec")
    ]
    steps.append((f"rig rm {name}", "Remove this workspace"))
    print_next_steps(steps)


__all__ = ["apply", "fork"]
