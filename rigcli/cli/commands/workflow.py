"""plan, apply and fork: the commands that evaluate a workflow."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rigcli.cli.output import emit_json, stderr_is_terminal, stdout_is_terminal
from rigcli.cli.session import Session
from rigcli.errors import UsageError
from rigcli.records import WorkspaceRecord

if TYPE_CHECKING:
    from rigcli.engine.results import ApplyResult


def _workflow_flag(session: Session, workflow: str) -> str:
    return f" --workflow {workflow}" if len(session.workflow_names()) > 1 else ""


def plan(session: Session) -> int:
    engine = session.engine
    result = session.with_workflow(lambda workflow: session.run(engine.plan(workflow=workflow)))
    if session.opts.json:
        emit_json(result.to_json())
        return 0
    from rigcli.render.tables import print_message, print_plan

    print_plan(result)
    if result.cached_node_count < result.node_count:
        print_message(
            f"For cache details, run: rig cache explain{_workflow_flag(session, result.workflow)}",
            style="dim",
            err=False,
        )
    return 0


def apply(session: Session, *, dry_run: bool = False) -> int:
    engine = session.engine
    if dry_run:
        result = session.with_workflow(lambda workflow: session.run(engine.apply(workflow=workflow, dry_run=True)))
        if session.opts.json:
            emit_json(result.to_json())
            return 0
        from rigcli.render.tables import print_message, print_plan

        print_plan(result.plan)
        print_message("No changes applied.", style="dim", err=False)
        return 0

    def run(workflow: str | None) -> ApplyResult:
        with session.watch():
            return session.run(engine.apply(workflow=workflow))

    applied = session.with_workflow(run)
    if session.opts.json:
        emit_json(applied.to_json())
    return 0


def _ask_name(workflow: str) -> str:
    from rigcli.authoring.project import check_workspace_name
    from rigcli.errors import RigError
    from rigcli.render.prompts import text

    def problem(value: str) -> str | None:
        try:
            check_workspace_name(value)
        except RigError as exc:
            return str(exc)
        return None

    import secrets

    return text("Workspace name", default=f"{workflow}-{secrets.token_hex(2)}", validate=problem)


def fork(session: Session, name: str | None) -> int:
    # The engine checks the name itself before it takes the lock or applies anything.
    if name is None and not session.opts.interactive:
        raise UsageError("create requires a workspace name: rig fork NAME")
    session.expect_project_code()  # the workspace's create hook
    if name is None:  # the default name says which workflow it is made from
        workflow = session.workflow()
        record = _fork(session, _ask_name(workflow), workflow)
    else:
        given = name
        record = session.with_workflow(lambda workflow: _fork(session, given, workflow))
    if session.opts.json:
        emit_json(record)
        return 0
    if not stdout_is_terminal():
        # So that `name=$(rig fork ...)` works.
        print(record.name, flush=True)
    if stderr_is_terminal():
        _next_steps(session, record.name, record.workflow)
    return 0


def _fork(session: Session, name: str, workflow: str | None) -> WorkspaceRecord:
    with session.watch():
        return session.run(session.engine.fork(name=name, workflow=workflow))


def _next_steps(session: Session, name: str, workflow: str) -> None:
    from rigcli.render.tables import print_next_steps

    steps = [
        (f"rig op {name} {info.id}", info.description or info.title or "")
        for info in session.engine.list_workspace_operations(workflow)
        if info.id != "remove"
    ]
    steps.append((f"rig rm {name}", "Remove this workspace"))
    print_next_steps(steps)


__all__ = ["apply", "fork", "plan"]
