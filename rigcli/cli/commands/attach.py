"""rig shell WS and rig exec WS -- CMD [ARG...]: a program inside a workspace, on this terminal; its exit code.

Most often the program starts without the config being loaded (``lean_attach.py``: what the
last full load remembered, while the project's files are unchanged). A project that defines its
own ``shell``/``exec`` workspace operation keeps it: the command then
runs that operation (``rig op WS shell``), with the command line as its input. Otherwise the
program runs through the workspace's provider (``Engine.attach``) on rig's own stdin, stdout and
stderr, untouched by rig's output relay: a terminal when stdin is one (for ``exec``, when stdout
is one too), plain streams otherwise, and rig exits with the program's exit code.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rigcli.cli.spec import GlobalOptions
from rigcli.errors import UsageError

# Not typing.TYPE_CHECKING: the lean path starts here and imports no typing (rigcli/__init__.py);
# mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:  # opargs imports pydantic: only a project's own shell/exec operation needs it
    from rigcli.cli.opargs import InputField


def shell(opts: GlobalOptions, *, name: str, start: bool = False) -> int:
    return _enter(opts, name, None, start=start, operation="shell")


def exec_(opts: GlobalOptions, *, name: str, argv: Sequence[str] = (), start: bool = False) -> int:
    if not argv:
        raise UsageError("exec needs a command: rig exec WORKSPACE -- CMD [ARG...]")
    return _enter(opts, name, list(argv), start=start, operation="exec")


def _enter(opts: GlobalOptions, name: str, argv: list[str] | None, *, start: bool, operation: str) -> int:
    from rigcli.cli.commands.lean_attach import attach_lean

    code = attach_lean(opts, name, argv, operation)
    if code is not None:
        return code
    from rigcli.cli.session import Session

    with Session(opts, relay=False) as session:
        session.expect_project_code()
        workflow = session.workspace_workflow(name)
        own = {info.id: info for info in session.engine.list_workspace_operations(workflow)}
        if operation in own:  # the project's own operation takes precedence
            from rigcli.cli.commands.operation import workspace_operation
            from rigcli.cli.opargs import fields_from_schema

            session.relay_output()
            words = _as_inputs(argv, fields_from_schema(own[operation].input_schema))
            return workspace_operation(session, name, operation, words, start=start)
        if opts.json:
            raise UsageError(f"rig {operation} passes the program's own output through; it has no --json document")
        tty = os.isatty(0) and (argv is None or os.isatty(1))
        env = {"TERM": os.environ.get("TERM") or "xterm"} if tty else {}
        engine = session.engine
        return session.foreground(engine.attach(name, argv, tty=tty, env=env, workflow=workflow, start=start))


def _as_inputs(argv: list[str] | None, fields: Sequence[InputField]) -> list[str]:
    """The command line as a project operation's input: every word for a list positional, else one
    shell command (``rig exec ws -- ls -la`` gives the operation ``ls -la``)."""
    if not argv:
        return []
    positionals = [item for item in fields if item.position is not None]
    if any(item.kind == "array" for item in positionals) or len(argv) == 1:
        return ["--", *argv]
    import shlex  # it imports re (and enum): ~27M instructions a lean exec never needs

    return ["--", shlex.join(argv)]


__all__ = ["exec_", "shell"]
