"""rig cp: files between the host and a workspace (``rigcli/connect/copy.py``), like ``docker cp``."""

from __future__ import annotations

import sys

from rigcli.cli.commands.reach import reach
from rigcli.cli.output import emit_json
from rigcli.connect.copy import MachinePaths, copy_in, copy_out, parse_pair
from rigcli.errors import UsageError
from rigcli.provider_kit.connect import SupportsExecStreams, SupportsFileArchives

TYPE_CHECKING = False  # not typing's: the direct way imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cli.session import Session


def cp(session: Session, *, source: str, destination: str) -> int:
    opts = session.opts
    src, dest = parse_pair(source, destination)
    remote = src if src.workspace is not None else dest
    assert remote.workspace is not None
    if opts.json and dest.stream:
        raise UsageError("rig cp --json: stdout cannot be both the JSON document and the tar stream")
    relative = not remote.path.startswith("/")
    primitives = ["file archives", *(["exec streams"] if relative else [])]
    session.leave_output_alone()  # a tar on stdout is bytes, not text for the masker
    with reach(session, remote.workspace, primitives) as reached:
        target = reached.target
        files = target.controller
        assert isinstance(files, SupportsFileArchives)

        def workdir() -> str:
            assert isinstance(files, SupportsExecStreams)
            return files.machine_facts(target.resource).workdir

        machine = MachinePaths(files, target.resource, workdir)
        if src.workspace is None:
            copy_in(machine, src.path, dest.path, sys.stdin.buffer)
        else:
            sys.stdout.flush()
            copy_out(machine, src.path, dest.path, sys.stdout.fileno())
        if opts.json:
            emit_json({"workspace": remote.workspace, "source": source, "destination": destination})
    return 0


__all__ = ["cp"]
