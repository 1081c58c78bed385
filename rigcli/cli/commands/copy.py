"""rig cp: files between the host and a workspace (``rigcli/connect/copy.py``), like ``docker cp``."""

from __future__ import annotations

import sys

from rigcli.cli.spec import GlobalOptions
from rigcli.errors import UsageError


def cp(opts: GlobalOptions, *, source: str, destination: str) -> int:
    from rigcli.cli.commands.connect import reach
    from rigcli.cli.output import emit_json
    from rigcli.connect.copy import MachinePaths, copy_in, copy_out, parse_pair
    from rigcli.provider_kit.connect import SupportsExecStreams, SupportsFileArchives

    src, dest = parse_pair(source, destination)
    remote = src if src.workspace is not None else dest
    assert remote.workspace is not None
    if opts.json and dest.stream:
        raise UsageError("rig cp --json: stdout cannot be both the JSON document and the tar stream")
    relative = not remote.path.startswith("/")
    primitives = ["file archives", *(["exec streams"] if relative else [])]
    # relay=False: a tar on stdout is bytes, not text for the masker.
    with reach(opts, remote.workspace, primitives) as reached:
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
