"""rig ssh-proxy, rig ssh-config and rig ssh: a workspace reached by the system's own ssh (and every
editor and tool built on it), through the SSH server side that ``rig ssh-proxy`` runs in a
``ProxyCommand``."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rigcli.cli.commands.reach import connect_target, reach
from rigcli.cli.output import emit_json
from rigcli.connect import sshconfig
from rigcli.connect.hostkeys import ensure_host_key
from rigcli.connect.places import alias_of, private_dir, ssh_home
from rigcli.connect.server import serve
from rigcli.connect.sshconfig import block, project_text
from rigcli.errors import RigError, UsageError
from rigcli.provider_kit.connect import SupportsExecStreams
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state.process import this_user

if TYPE_CHECKING:
    import asyncssh

    from rigcli.cli.session import Session
    from rigcli.connect.sshconfig import HostBlock
else:
    asyncssh = lazy_module("asyncssh")  # for its debug level alone: rigcli.connect quiets its import first


def quiet_asyncssh() -> None:
    """asyncssh logs what ssh already says (its import's warnings are quieted by ``rigcli.connect``)."""
    if os.environ.get("RIG_DEBUG") != "1":
        logging.getLogger("asyncssh").setLevel(logging.CRITICAL)
    elif os.environ.get("RIG_SSH_LOG"):
        logging.basicConfig(filename=os.environ["RIG_SSH_LOG"], level=logging.DEBUG)
        asyncssh.set_debug_level(2)


def ssh_proxy(session: Session, *, name: str) -> int:
    session.leave_output_alone()  # stdin and stdout are the SSH connection's
    with reach(session, name, ["exec streams"], signals=False) as reached:
        quiet_asyncssh()
        target = reached.target
        key = ensure_host_key(reached.project_dir, name)
        # rig's own signal handling set aside: the server ends its programs itself on SIGHUP (what ssh
        # sends its ProxyCommand when it is done), SIGTERM and SIGINT.
        serving = serve(target, key, agent=target.provider_id == "local")
        if reached.loaded:
            session.foreground(serving)
        else:
            asyncio.run(serving)
    return 0


def _user_of(session: Session, name: str, key: str) -> str:
    """Who programs in the workspace run as (``id -un`` there), remembered beside its host key for when
    the workspace cannot be asked (stopped, its daemon away)."""

    remembered = f"{key}.user"
    try:
        target = connect_target(session, name, ["exec streams"], start=False)
        assert isinstance(target.controller, SupportsExecStreams)
        user = target.controller.machine_facts(target.resource).user
    except RigError:
        try:
            with open(remembered, encoding="utf-8") as handle:
                return handle.read().strip() or "root"
        except OSError:
            return this_user()
    with open(remembered, "w", encoding="utf-8") as handle:
        handle.write(user + "\n")
    return user


def host_blocks(session: Session, names: Sequence[str]) -> list[HostBlock]:
    engine = session.engine
    project_dir = str(engine.project_dir)
    known = sorted({record.name for record in engine.workspaces.list_workspaces(session.workflow_filter())})
    if names:
        missing = [name for name in names if name not in known]
        if missing:
            raise RigError(f'Unknown workspace "{missing[0]}"')
    blocks = []
    for name in names or known:
        key = ensure_host_key(project_dir, name)
        blocks.append(block(project_dir, name, alias_of(name, project_dir), _user_of(session, name, key)))
    return blocks


def ssh_config(session: Session, *, names: Sequence[str] = (), install: bool = False, uninstall: bool = False) -> int:
    opts = session.opts
    if install and uninstall:
        raise UsageError("ssh-config takes --install or --uninstall, not both")
    quiet_asyncssh()
    project_dir = str(session.engine.project_dir)
    if uninstall:
        changed = sshconfig.uninstall(project_dir)
        if opts.json:
            emit_json({"hosts": [], "uninstalled": True, "ssh_config_changed": changed})
        else:
            print(f"Removed this project's hosts from {sshconfig.installed_config_path()}", file=sys.stderr)
        return 0
    blocks = host_blocks(session, names)
    if install:
        changed = sshconfig.install(project_dir, blocks)
        if not opts.json:
            where = sshconfig.installed_config_path()
            print(f"Installed {len(blocks)} host(s) in {where}", file=sys.stderr)
            if changed:
                print(f"Added '{sshconfig.include_line()}' at the top of ~/.ssh/config", file=sys.stderr)
    if opts.json:
        emit_json({"hosts": [item.to_json() for item in blocks]})
    elif not install:
        sys.stdout.write(sshconfig.project_text(blocks))
    return 0


def ssh(session: Session, *, args: Sequence[str] = ()) -> int:
    """``rig ssh WS [SSH-OPTION...] [-- CMD [ARG...]]``: the system ssh with the workspace's block."""

    words = list(args)
    if not words or words[0].startswith("-"):
        raise UsageError("ssh needs a workspace: rig ssh WS [SSH-OPTION...] [-- CMD [ARG...]]")
    name, rest = words[0], words[1:]
    options, command = (rest[: rest.index("--")], rest[rest.index("--") + 1 :]) if "--" in rest else (rest, [])
    program = shutil.which("ssh")
    if program is None:
        raise RigError("rig ssh runs the system's ssh, which is not on PATH (install openssh-client)")
    quiet_asyncssh()
    blocks = host_blocks(session, [name])
    config = os.path.join(private_dir(os.path.join(ssh_home(), "config")), f"{blocks[0].alias}.conf")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(project_text(blocks))
    argv = [program, "-F", config, *options, blocks[0].alias]
    if command:
        argv.append(shlex.join(command))
    else:  # a session, as rig shell's: the workflow's workspace(on_attach=...) first (not before a command)
        with session.watch():
            session.run(session.engine.lifecycle.session_started(name, session.workflow_filter()))
    return subprocess.call(argv)


__all__ = ["host_blocks", "quiet_asyncssh", "ssh", "ssh_config", "ssh_proxy"]
