"""rig ssh-proxy, rig ssh-config and rig ssh: a workspace reached by the system's own ssh (and every
editor and tool built on it), through the SSH server side that ``rig ssh-proxy`` runs in a
``ProxyCommand``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rigcli.cli.spec import GlobalOptions
from rigcli.errors import RigError, UsageError

if TYPE_CHECKING:
    from rigcli.cli.session import Session
    from rigcli.connect.sshconfig import HostBlock
    from rigcli.engine.connect_target import ConnectTarget


def quiet_asyncssh() -> None:
    """asyncssh's import warns about algorithms it still supports, and it logs what ssh already says."""
    import logging
    import warnings

    warnings.filterwarnings("ignore", module="asyncssh")
    warnings.filterwarnings("ignore", message=".*(DSA|TripleDES|Blowfish|CAST5).*")
    if os.environ.get("RIG_DEBUG") != "1":
        logging.getLogger("asyncssh").setLevel(logging.CRITICAL)
    elif os.environ.get("RIG_SSH_LOG"):
        logging.basicConfig(filename=os.environ["RIG_SSH_LOG"], level=logging.DEBUG)
        import asyncssh

        asyncssh.set_debug_level(2)


def connect_target(
    session: Session, name: str, primitives: Sequence[str], *, say_started: bool = True
) -> ConnectTarget:
    """The workspace's machine (started first when stopped, and said on stderr)."""
    target = session.run(session.engine.connect_target(name, session.workflow_filter(), primitives))
    if target.started and say_started:
        print(f"rig: workspace {name} was stopped; started it", file=sys.stderr, flush=True)
    return target


class Reach:
    """The machine a connect command works on, its project's directory, and the session when it took the
    full way (None when the lean way found it: ``lean_connect.py``)."""

    __slots__ = ("project_dir", "session", "target")

    def __init__(self, target: ConnectTarget, project_dir: str, session: Session | None) -> None:
        self.target = target
        self.project_dir = project_dir
        self.session = session


@contextlib.contextmanager
def reach(
    opts: GlobalOptions, name: str, primitives: Sequence[str], *, relay: bool = False, signals: bool = True
) -> Iterator[Reach]:
    """The workspace's machine, the lean way when it can be, else through a Session (which starts a stopped
    one and says so). ``signals``: Ctrl-C and SIGTERM unwind the body as ``Interrupted`` (exit 130/143)."""
    from rigcli.cli.commands.lean_connect import reach_lean

    lean = reach_lean(opts, name, primitives)
    if lean is None:
        from rigcli.cli.session import Session

        with Session(opts, relay=relay) as session:
            yield Reach(connect_target(session, name, primitives), str(session.engine.project_dir), session)
        return
    from rigcli.cli.interrupts import Interrupted, Interrupts, interrupted_error

    interrupts = Interrupts(lambda signum: None)
    if signals:
        interrupts.install()
    try:
        yield Reach(lean.target, lean.project_dir, None)
    except Interrupted as exc:
        raise interrupted_error(exc.signum) from None
    finally:
        interrupts.uninstall()
        lean.close()


def ssh_proxy(opts: GlobalOptions, *, name: str) -> int:
    from rigcli.connect.hostkeys import ensure_host_key
    from rigcli.connect.server import serve

    with reach(opts, name, ["exec streams"], signals=False) as reached:
        quiet_asyncssh()
        target = reached.target
        key = ensure_host_key(reached.project_dir, name)
        # rig's own signal handling set aside: the server ends its programs itself on SIGHUP (what ssh
        # sends its ProxyCommand when it is done), SIGTERM and SIGINT.
        serving = serve(target, key, agent=target.provider_id == "local")
        if reached.session is not None:
            reached.session.foreground(serving)
        else:
            import asyncio

            asyncio.run(serving)
    return 0


def _user_of(session: Session, name: str, key: str) -> str:
    """Who programs in the workspace run as (``id -un`` there), remembered beside its host key for when
    the workspace cannot be asked (stopped, its daemon away)."""
    from rigcli.provider_kit.connect import SupportsExecStreams

    remembered = f"{key}.user"
    try:
        target = session.run(
            session.engine.connect_target(name, session.workflow_filter(), ["exec streams"], start=False)
        )
        assert isinstance(target.controller, SupportsExecStreams)
        user = target.controller.machine_facts(target.resource).user
    except RigError:
        try:
            with open(remembered, encoding="utf-8") as handle:
                return handle.read().strip() or "root"
        except OSError:
            from rigcli.state.process import this_user

            return this_user()
    with open(remembered, "w", encoding="utf-8") as handle:
        handle.write(user + "\n")
    return user


def host_blocks(session: Session, names: Sequence[str]) -> list[HostBlock]:
    from rigcli.connect.hostkeys import ensure_host_key
    from rigcli.connect.places import alias_of
    from rigcli.connect.sshconfig import block

    engine = session.engine
    project_dir = str(engine.project_dir)
    known = sorted({record.name for record in engine.list_workspaces(session.workflow_filter())})
    if names:
        missing = [name for name in names if name not in known]
        if missing:
            raise RigError(f'Unknown workspace "{missing[0]}"')
    blocks = []
    for name in names or known:
        key = ensure_host_key(project_dir, name)
        blocks.append(block(project_dir, name, alias_of(name, project_dir), _user_of(session, name, key)))
    return blocks


def ssh_config(
    opts: GlobalOptions, *, names: Sequence[str] = (), install: bool = False, uninstall: bool = False
) -> int:
    from rigcli.cli.output import emit_json
    from rigcli.cli.session import Session
    from rigcli.connect import sshconfig

    if install and uninstall:
        raise UsageError("ssh-config takes --install or --uninstall, not both")
    quiet_asyncssh()
    with Session(opts) as session:
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


def ssh(opts: GlobalOptions, *, args: Sequence[str] = ()) -> int:
    """``rig ssh WS [SSH-OPTION...] [-- CMD [ARG...]]``: the system ssh with the workspace's block."""
    import shlex
    import shutil
    import subprocess

    from rigcli.cli.session import Session
    from rigcli.connect.places import private_dir, ssh_home
    from rigcli.connect.sshconfig import project_text

    words = list(args)
    if not words or words[0].startswith("-"):
        raise UsageError("ssh needs a workspace: rig ssh WS [SSH-OPTION...] [-- CMD [ARG...]]")
    name, rest = words[0], words[1:]
    options, command = (rest[: rest.index("--")], rest[rest.index("--") + 1 :]) if "--" in rest else (rest, [])
    program = shutil.which("ssh")
    if program is None:
        raise RigError("rig ssh runs the system's ssh, which is not on PATH (install openssh-client)")
    quiet_asyncssh()
    with Session(opts) as session:
        blocks = host_blocks(session, [name])
        config = os.path.join(private_dir(os.path.join(ssh_home(), "config")), f"{blocks[0].alias}.conf")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(project_text(blocks))
    argv = [program, "-F", config, *options, blocks[0].alias]
    if command:
        argv.append(shlex.join(command))
    return subprocess.call(argv)


__all__ = ["Reach", "connect_target", "host_blocks", "quiet_asyncssh", "reach", "ssh", "ssh_config", "ssh_proxy"]
