"""rig open: a workspace in VS Code or Cursor (over Remote-SSH, through rig's ssh config) or its first
declared port in a browser (through a running ``rig forward``); ``--print`` only prints the URL."""

from __future__ import annotations

import posixpath
import sys
from typing import TYPE_CHECKING

from rigcli.cli.commands.connect import connect_target, host_blocks, quiet_asyncssh
from rigcli.cli.output import emit_json
from rigcli.connect import sshconfig
from rigcli.connect.forward_record import running_forwards
from rigcli.connect.opener import browser_url, editor_url, hand_to_browser
from rigcli.connect.places import alias_of
from rigcli.errors import RigError, UsageError
from rigcli.provider_kit.connect import SupportsExecStreams

if TYPE_CHECKING:
    from rigcli.cli.session import Session
    from rigcli.records import WorkspaceRecord


def open_(
    session: Session, *, name: str, path: str | None = None, editor: str = "code", print_only: bool = False
) -> int:

    opts = session.opts
    record = _record(session, name)
    project_dir = str(session.engine.project_dir)
    url = _browser(session, record, path) if editor == "browser" else _editor(session, editor, name, path)
    if not print_only and editor != "browser":
        _install_when_missing(session, name, project_dir)
    opener = None if print_only else hand_to_browser(url)
    if opts.json:
        emit_json({"workspace": name, "editor": editor, "url": url, "opened": opener is not None})
    elif print_only:
        print(url)
    else:
        print(f"Opened {url} ({opener})", file=sys.stderr)
    return 0


def _record(session: Session, name: str) -> WorkspaceRecord:
    found = [
        record for record in session.engine.workspaces.list_workspaces(session.workflow_filter()) if record.name == name
    ]
    if not found:
        raise RigError(f'Unknown workspace "{name}"')
    if len(found) > 1:
        workflows = ", ".join(sorted(record.workflow for record in found))
        raise UsageError(f"Workspace {name} exists in workflows {workflows}; pass --workflow")
    return found[0]


def _editor(session: Session, editor: str, name: str, path: str | None) -> str:
    """The editor's Remote-SSH URL of ``path`` (relative: under the machine's working directory)."""

    where = path or ""
    if not where.startswith("/"):
        target = connect_target(session, name, ["exec streams"])
        assert isinstance(target.controller, SupportsExecStreams)
        where = posixpath.join(target.controller.machine_facts(target.resource).workdir, where)
    return editor_url(editor, alias_of(name, str(session.engine.project_dir)), where)


def _browser(session: Session, record: WorkspaceRecord, path: str | None) -> str:
    provenance = record.provenance if isinstance(record.provenance, dict) else {}
    ports = provenance.get("ports")  # what its workspace() declared when it was made (none: made by an older rig)
    if not isinstance(ports, list):
        ports = []
    forwards = running_forwards(str(session.engine.project_dir), record.name)
    return browser_url(record.name, [port for port in ports if isinstance(port, dict)], forwards, path)


def _install_when_missing(session: Session, name: str, project_dir: str) -> None:
    if sshconfig.installed_alias(project_dir, alias_of(name, project_dir)):
        return
    quiet_asyncssh()
    blocks = host_blocks(session, [])
    sshconfig.install(project_dir, blocks)
    print(
        f"rig: installed this project's ssh hosts in {sshconfig.installed_config_path()} "
        f"(included from ~/.ssh/config) so the editor can reach {alias_of(name, project_dir)}",
        file=sys.stderr,
        flush=True,
    )


__all__ = ["open_"]
