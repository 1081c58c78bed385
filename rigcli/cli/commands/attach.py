"""rig shell WS and rig exec WS -- CMD [ARG...]: a program inside a workspace, on this terminal; its exit code.

A project that defines its own ``shell``/``exec`` workspace operation keeps it: the command then
runs that operation (``rig op WS shell``), with the command line as its input. Otherwise the
program runs through the workspace's provider on rig's own stdin, stdout and stderr, untouched by
rig's output relay: a terminal when stdin is one (for ``exec``, when stdout is one too), plain
streams otherwise, and rig exits with the program's exit code. What the config says (its own
operations, its provider definitions) is an answer the cache may give (``rigcli/cache/``); with a
plugin that can attach from a definition's config alone (``SupportsDirectAttach``) and a plain
case (SQLite state, one ready workspace with one machine), the program starts without the engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rigcli.cli.commands.plain_case import plain_machine, plugin_hook
from rigcli.errors import UsageError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state.session_file import FileEffects

TYPE_CHECKING = False  # not typing's: a remembered answer's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from rigcli.cache.answers import ConfigAnswer
    from rigcli.cli.opargs import InputField  # opargs imports pydantic: only a project's own operation needs it
    from rigcli.cli.session import Session

if TYPE_CHECKING:
    import shlex
else:
    shlex = lazy_module("shlex")


def shell(session: Session, *, name: str, start: bool = False) -> int:
    return _enter(session, name, None, start=start, operation="shell")


def exec_(session: Session, *, name: str, argv: Sequence[str] = (), start: bool = False) -> int:
    if not argv:
        raise UsageError("exec needs a command: rig exec WORKSPACE -- CMD [ARG...]")
    return _enter(session, name, list(argv), start=start, operation="exec")


def _enter(session: Session, name: str, argv: list[str] | None, *, start: bool, operation: str) -> int:
    opts = session.opts
    session.leave_output_alone()  # the program gets rig's own stdio (a project's operation relays it again)
    tty = os.isatty(0) and (argv is None or os.isatty(1))
    env: Mapping[str, str] = {"TERM": os.environ.get("TERM") or "xterm"} if tty else {}
    if not opts.json and not opts.json_stream:
        code = _attach_directly(session, session.answers.config(), name, argv, operation, tty=tty, env=env)
        if code is not None:
            return code
    session.expect_project_code()
    workflow = session.workspace_workflow(name)
    engine = session.engine
    own = {info.id: info for info in engine.operations.list_workspace_operations(workflow)}
    if operation in own:  # the project's own operation takes precedence
        from rigcli.cli.commands.operation import workspace_operation
        from rigcli.cli.opargs import fields_from_schema

        session.relay_output()
        words = _as_inputs(argv, fields_from_schema(own[operation].input_schema))
        return workspace_operation(session, name, operation, words, start=start)
    if opts.json:
        raise UsageError(f"rig {operation} passes the program's own output through; it has no --json document")
    return session.foreground(engine.lifecycle.attach(name, argv, tty=tty, env=env, workflow=workflow, start=start))


def _attach_directly(
    session: Session,
    answer: ConfigAnswer,
    name: str,
    argv: Sequence[str] | None,
    operation: str,
    *,
    tty: bool,
    env: Mapping[str, str],
) -> int | None:
    """The program started by the plugin from the definition's config alone, and its exit code; None,
    having started nothing, unless the case is plain: SQLite state with no workspace due to expire,
    one ready workspace ``name`` with one machine, no own ``shell``/``exec`` operation, one definition
    of the machine's provider (or none: its defaults), and a plugin that can and did."""
    machine = plain_machine(session, answer, name)
    if machine is None or operation in answer.operations(machine.workflow):
        return None
    if argv is None and answer.attach_hook(machine.workflow):  # the engine runs workspace(on_attach=...) first
        return None
    attach = plugin_hook(machine.provider_id, "attach_directly")
    if attach is None:
        return None
    program = list(argv) if argv is not None else None
    journal = FileEffects(machine.state_path, machine.provider_id)  # a program that could outlive a killed rig
    code = attach(
        machine.config, machine.effect, program, tty=tty, env=env, state_dir=machine.state_dir, effects=journal
    )
    return code if isinstance(code, int) else None


def _as_inputs(argv: list[str] | None, fields: Sequence[InputField]) -> list[str]:
    """The command line as a project operation's input: every word for a list positional, else one
    shell command (``rig exec ws -- ls -la`` gives the operation ``ls -la``)."""
    if not argv:
        return []
    positionals = [item for item in fields if item.position is not None]
    if any(item.kind == "array" for item in positionals) or len(argv) == 1:
        return ["--", *argv]

    return ["--", shlex.join(argv)]


__all__ = ["exec_", "shell"]
