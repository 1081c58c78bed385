"""The machine ``rig ssh-proxy``, ``rig cp`` and ``rig forward`` work on: found by the engine, or, in a
plain case, straight from what the config says of its provider.

An ssh connection with no master running starts a proxy, and an editor opens several: loading the
project's config and the engine for each costs more than the SSH handshake. As for ``rig shell``/``rig
exec`` (``attach.py``), what the config says of the workspace's provider is an answer the cache may
give (the rows' ``cache=("config",)``), and a plugin that can reach a machine from a definition's
config alone (``SupportsDirectConnect``: docker's ``providers/docker/primitives.py``) hands over its
primitives once it has seen it running. Anything else (a stopped machine, which the engine starts and
says so; a local workspace, whose host the engine checks; a provider without the hook) takes the
engine's way, which answers as always.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence

from rigcli.cli.commands.plain_case import plain_machine, plugin_hook
from rigcli.engine.connect_target import ConnectTarget
from rigcli.provider_kit.connect import PRIMITIVES

TYPE_CHECKING = False  # not typing's: the direct way imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.cli.session import Session


class Reach:
    """The machine a connect command works on and its project's directory; ``loaded``: found by the
    engine (its coroutines then run on the engine's loop)."""

    __slots__ = ("loaded", "project_dir", "target")

    def __init__(self, target: ConnectTarget, project_dir: str, *, loaded: bool) -> None:
        self.target = target
        self.project_dir = project_dir
        self.loaded = loaded


def connect_target(session: Session, name: str, primitives: Sequence[str], *, start: bool = True) -> ConnectTarget:
    """The workspace's machine found by the engine (started first when stopped, and said on stderr)."""
    target = session.run(session.engine.connections.target(name, session.workflow_filter(), primitives, start=start))
    if target.started:
        print(f"rig: workspace {name} was stopped; started it", file=sys.stderr, flush=True)
    return target


@contextlib.contextmanager
def reach(session: Session, name: str, primitives: Sequence[str], *, signals: bool = True) -> Iterator[Reach]:
    """The workspace's machine, directly when the case is plain, else through the engine. ``signals``:
    on the direct way, Ctrl-C and SIGTERM unwind the body as ``Interrupted`` (exit 130/143), as the
    engine's way does."""
    direct = _reach_directly(session, name, primitives)
    if direct is None:
        yield Reach(connect_target(session, name, primitives), str(session.engine.project_dir), loaded=True)
        return
    from rigcli.cli.interrupts import Interrupted, Interrupts, interrupted_error

    interrupts = Interrupts(lambda signum: None)
    if signals:
        interrupts.install()
    try:
        yield direct
    except Interrupted as exc:
        raise interrupted_error(exc.signum) from None
    finally:
        interrupts.uninstall()
        close = getattr(direct.target.controller, "close", None)
        if callable(close):
            close()


def _reach_directly(session: Session, name: str, primitives: Sequence[str]) -> Reach | None:
    """The plain case, or None having started nothing: SQLite state with no workspace due to expire, one
    ready workspace ``name`` with one machine, one definition of its provider (or none: its defaults),
    and a plugin that can reach it and offers every primitive asked."""
    if session.opts.json_stream:
        return None  # its events come from a load
    plain = plain_machine(session, session.answers.config(), name)
    connect = None if plain is None else plugin_hook(plain.provider_id, "connect_directly")
    if plain is None or connect is None:
        return None
    machine = connect(plain.config, plain.effect, state_dir=plain.state_dir)
    if machine is None:
        return None
    if not all(isinstance(machine, PRIMITIVES[wanted]) for wanted in primitives):
        close = getattr(machine, "close", None)
        if callable(close):
            close()
        return None  # the engine's way names what is missing
    ports = plain.provenance.get("ports") if isinstance(plain.provenance, dict) else None
    declared = tuple(port for port in ports if isinstance(port, dict)) if isinstance(ports, list) else ()
    target = ConnectTarget(name, plain.workflow, plain.provider_id, plain.effect, machine, False, declared)  # type: ignore[arg-type]
    return Reach(target, plain.project_dir, loaded=False)


__all__ = ["Reach", "connect_target", "reach"]
