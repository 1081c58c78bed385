"""rig forward: a workspace's ports on local ones, relayed until Ctrl-C (``rigcli/connect/forward.py``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rigcli.cli.commands.reach import reach
from rigcli.cli.interrupts import Interrupted
from rigcli.cli.output import emit_json_line
from rigcli.connect.forward import PortSpec, Relays, open_forwards, parse_specs
from rigcli.connect.forward_record import remove_record, write_record
from rigcli.errors import RigError
from rigcli.provider_kit.connect import SupportsPortStreams

if TYPE_CHECKING:
    from rigcli.cli.session import Session


def forward(session: Session, *, name: str, specs: Sequence[str] = (), address: str = "127.0.0.1") -> int:
    opts = session.opts  # with --json: one object per line on stdout as forwards open, not one document
    asked = parse_specs(specs)
    with reach(session, name, ["port streams"]) as reached:
        target = reached.target
        controller = target.controller
        assert isinstance(controller, SupportsPortStreams)
        protocols = {int(str(port["port"])): str(port["protocol"]) for port in target.ports}
        if asked:
            wanted = [PortSpec(spec.remote, spec.local, protocols.get(spec.remote, "http")) for spec in asked]
        else:
            wanted = [PortSpec(remote, None, protocol) for remote, protocol in protocols.items()]
        if not wanted:
            raise RigError(f"Workspace {name} declares no ports; name the ones to forward: rig forward {name} PORT")
        if target.provider_id == "local":  # its ports are this host's: the same number would reach itself
            wanted = [_elsewhere(spec, name, address) for spec in wanted]
        forwards = open_forwards(wanted, address)

        def refused(remote: int, why: str) -> None:
            print(f"rig: {name}:{remote}: {why}", file=sys.stderr, flush=True)

        relays = Relays(lambda remote: controller.open_port(target.resource, "127.0.0.1", remote), refused)
        record = ""
        try:
            lines = [item.to_json(name) for item in forwards]
            for item, line in zip(forwards, lines, strict=True):
                if opts.json:
                    emit_json_line(line)
                else:
                    print(f"{item.url} -> {name}:{item.remote}", flush=True)
            record = write_record(reached.project_dir, name, lines)
            relays.serve(forwards)
        except Interrupted as exc:  # Ctrl-C or SIGTERM is how a forward ends: no error line
            return exc.exit_code
        finally:
            for item in forwards:
                item.listener.close()
            relays.close()
            if record:
                remove_record(record)
    return 0


def _elsewhere(spec: PortSpec, name: str, address: str) -> PortSpec:
    if spec.local is None:
        return PortSpec(spec.remote, 0, spec.protocol)
    if spec.local == spec.remote and address in ("127.0.0.1", "0.0.0.0", "localhost"):
        raise RigError(
            f"Workspace {name} is a local workspace: its port {spec.remote} is this host's port {spec.remote}; "
            f"forward it to another one (rig forward {name} 0:{spec.remote})"
        )
    return spec


__all__ = ["forward"]
