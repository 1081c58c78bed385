"""rig op: WORKSPACE OPERATION, WORKSPACE/OPERATION, or a workflow-level OPERATION, with typed inputs."""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.cli.commands.workspace import confirm_destructive
from rigcli.cli.opargs import InputField, convert, fields_from_schema, option_rows, parse_operation_args, usage_line
from rigcli.cli.output import emit_json, shown
from rigcli.cli.session import Session
from rigcli.cli.table import TABLE
from rigcli.engine.results import OperationInfo
from rigcli.errors import NotFoundError, RigError, UsageError
from rigcli.jsonutil import JsonValue
from rigcli.render import prompts
from rigcli.render.prompts import select
from rigcli.render.tables import print_message, print_table, print_value

YES_FLAGS = ("-y", "--yes")
START_FLAG = "--start"  # start a stopped workspace first (rig's, unless the operation has a "start" input)
HELP_FLAGS = ("-h", "--help")


def op(session: Session, args: Sequence[str]) -> int:
    words = list(args)
    if words[:1] and words[0] in HELP_FLAGS:
        return _project_help(session)
    if not words or words[0].startswith("-"):
        raise UsageError(
            "op needs a target: rig op WORKSPACE OPERATION, rig op WORKSPACE/OPERATION or rig op OPERATION"
        )
    target = words.pop(0)
    session.expect_project_code()  # the operation's handler
    if "/" in target:
        workspace, _, operation = target.partition("/")
        return _workspace_op(session, workspace, operation, words)
    summaries = session.engine.project.summaries()
    only = session.workflow_filter()
    if only is not None:
        summaries = [item for item in summaries if item.name == only]
    workspaces = {record.name for record in session.engine.workspaces.list_workspaces(only)}
    owners = [item.name for item in summaries if target in item.operations]
    if target in workspaces and owners:
        raise UsageError(
            f'"{target}" is both a workspace and a workflow operation; '
            f'run a workspace operation as "rig op {target}/OPERATION"'
        )
    if target in workspaces:
        if words[:1] and words[0] in HELP_FLAGS:
            return _workspace_help(session, target)
        if not words or words[0].startswith("-"):
            workflow = session.workspace_workflow(target)
            ids = [info.id for info in session.engine.operations.list_workspace_operations(workflow)]
            raise UsageError(f"rig op {target} needs an operation (available: {', '.join(ids)})")
        return _workspace_op(session, target, words.pop(0), words)
    if owners:
        return _workflow_op(session, target, owners, words)
    known = sorted({op_id for item in summaries for op_id in item.operations})
    raise NotFoundError(
        f'No workspace or operation named "{target}" '
        f"(workspaces: {', '.join(sorted(workspaces)) or 'none'}; operations: {', '.join(known) or 'none'})"
    )


def _workspace_op(session: Session, workspace: str, operation: str, words: list[str]) -> int:
    return workspace_operation(session, workspace, operation, words)


def workspace_operation(
    session: Session, workspace: str, operation: str, words: list[str], *, start: bool = False
) -> int:
    """Run a workspace operation with its inputs as words; its exit code (see ``exit_code_of``)."""
    workflow = session.workspace_workflow(workspace)
    infos = {info.id: info for info in session.engine.operations.list_workspace_operations(workflow)}
    info = infos.get(operation)
    if info is None:
        raise NotFoundError(
            f'Workflow {workflow} has no workspace operation "{operation}" (available: {", ".join(infos) or "none"})'
        )
    yes = False
    if operation == "remove":
        yes = any(word in YES_FLAGS for word in words)
        words = [word for word in words if word not in YES_FLAGS]
    elif START_FLAG in _options_part(words) and not any(item.name == "start" for item in _fields(info)):
        start = True  # rig's own --start, unless the operation has an input of that name
        words.remove(START_FLAG)
    values = _inputs(session, info, words, f"rig op {workspace} {operation}")
    if values is None:
        return 0
    if operation == "remove":
        confirm_destructive(session, f"Remove workspace {workspace}?", yes=yes, command=f"op {workspace} remove")
    with session.watch(stream_output=True):
        result = session.run(
            session.engine.operations.run_workspace_operation(
                workspace, operation, input=values, workflow=workflow, start=start
            )
        )
    return _show(session, result)


def _options_part(words: list[str]) -> list[str]:
    """The words before a ``--`` (after it, every word is an input's value)."""
    return words[: words.index("--")] if "--" in words else words


def _fields(info: OperationInfo) -> list[InputField]:
    return fields_from_schema(info.input_schema)


def _workflow_op(session: Session, operation: str, owners: list[str], words: list[str]) -> int:
    if len(owners) > 1:
        if not session.opts.interactive:
            raise UsageError(
                f"Operation {operation} is defined by several workflows: {', '.join(owners)}. Pass --workflow."
            )

        owners = [select(f"Operation {operation} is defined by several workflows", [(name, "") for name in owners])]
    workflow = owners[0]
    info = next(item for item in session.engine.operations.list_operations(workflow) if item.id == operation)
    values = _inputs(session, info, words, f"rig op {operation}")
    if values is None:
        return 0
    with session.watch(stream_output=True):
        result = session.run(
            session.engine.operations.run_operation(operation=operation, input=values, workflow=workflow)
        )
    return _show(session, result)


def _inputs(session: Session, info: OperationInfo, words: list[str], command: str) -> dict[str, object] | None:
    """Parsed input values, or None after printing the operation's help."""
    fields = fields_from_schema(info.input_schema)
    parsed = parse_operation_args(info.id, fields, words)
    if parsed.help:
        _print_help(info, fields, command)
        return None
    for item in parsed.missing(fields):
        if not session.opts.interactive:
            raise UsageError(f"Operation {info.id} requires {item.label}")
        parsed.values[item.name] = _prompt(session, item, info.id)
    return parsed.values


def _prompt(session: Session, item: InputField, op_id: str) -> object:
    message = item.description or item.name
    if item.kind == "workspace":
        names = sorted({record.name for record in session.engine.workspaces.list_workspaces(None)})
        if not names:
            raise RigError(f"No workspaces are available for {item.label}")
        return prompts.select(message, [(name, "") for name in names])
    if item.choices:
        return convert(item, prompts.select(message, [(choice, "") for choice in item.choices]), op_id)
    if item.kind == "boolean":
        return prompts.confirm(message)

    def problem(answer: str) -> str | None:
        if not answer.strip():
            return f"{item.name} is required"
        try:
            convert(item, answer, op_id, kind=item.item_kind if item.kind == "array" else None)
        except UsageError as exc:
            return str(exc)
        return None

    answer = prompts.text(message, validate=problem)
    if item.kind == "array":
        return [convert(item, part.strip(), op_id, kind=item.item_kind) for part in answer.split(",") if part.strip()]
    return convert(item, answer, op_id)


def _project_help(session: Session) -> int:
    """``rig op --help``: how to call it, then the project's operations (when there is a project)."""

    spec = TABLE.root.subcommand("op")
    assert spec is not None
    usage = " ".join(item.metavar for item in spec.arguments)
    print_message(f"Usage: rig op {usage}\n\n{spec.summary}\n\n{spec.examples_text()}", err=False)
    try:
        engine = session.engine
        workflows = [session.workflow_filter()] if session.opts.workflow else engine.project.workflow_names()
    except RigError as exc:  # no project here (or it does not load): the usage alone still helps
        print_message(f"\nRun it inside a rig project to see the project's operations ({exc})", err=False)
        return 0
    rows: list[list[object]] = []
    for workflow in workflows:
        rows += [[f"rig op {info.id}", _about(info)] for info in engine.operations.list_operations(workflow)]
        rows += [
            [f"rig op WORKSPACE {info.id}", _about(info)]
            for info in engine.operations.list_workspace_operations(workflow)
        ]
    print_message("", err=False)
    _print_operations(rows, "this project defines no operations")
    names = sorted({record.name for record in engine.workspaces.list_workspaces(session.opts.workflow)})
    print_message(f"\nWorkspaces: {', '.join(names) if names else 'none yet (rig fork NAME makes one)'}", err=False)
    return 0


def _workspace_help(session: Session, workspace: str) -> int:
    """``rig op WORKSPACE --help``: the operations that workspace has."""

    workflow = session.workspace_workflow(workspace)
    print_message(f"Usage: rig op {workspace} OPERATION [INPUTS]   (OPERATION --help shows its inputs)", err=False)
    print_message(f"\nOperations of workspace {workspace} (workflow {workflow}):", err=False)
    infos = session.engine.operations.list_workspace_operations(workflow)
    _print_operations([[f"rig op {workspace} {info.id}", _about(info)] for info in infos], "no operations")
    return 0


def _about(info: OperationInfo) -> str:
    return info.description or info.title or ""


def _print_operations(rows: list[list[object]], empty: str) -> None:
    print_table(["command", "description"], rows, empty=empty)


def _print_help(info: OperationInfo, fields: list[InputField], command: str) -> None:
    print_message(f"Usage: {usage_line(command, fields)}", err=False)
    about = info.description or info.title
    if about:
        print_message(about, err=False)
    print_table(["option", "type", "default", "description"], option_rows(fields), empty="(no inputs)")


def _show(session: Session, result: JsonValue) -> int:
    code = exit_code_of(result)
    if session.opts.json:
        emit_json(result)
    else:
        print_value(shown(result))
    return code or 0


def exit_code_of(result: JsonValue) -> int | None:
    """The convention for operations that run a command: a result object with an integer
    ``exit_code`` makes ``rig op`` exit with it: 0–255 as it is, a negative one (-N, death by signal
    N, as Python's subprocess reports it) as 128 + N, a larger one as 1."""
    if not isinstance(result, dict):
        return None
    code = result.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    if code < 0:
        return min(128 - code, 255)
    return code if code <= 255 else 1


__all__ = ["exit_code_of", "op", "workspace_operation"]
