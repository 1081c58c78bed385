"""The Engine protocol: everything the CLI (or an embedding host) may ask of a loaded project.

Create one with ``rigcli.engine.create_engine(...)`` and ``await engine.load()``, then ask the part
that owns what you need: ``engine.planner.plan(...)``, ``engine.workspaces.fork(...)``,
``engine.history.select_logs(...)``. Every method raises ``rigcli.errors.RigError`` subclasses,
each carrying its exit code. Writers (apply, fork,
remove, operations, invalidate, clear) hold the state lock for their whole run; reads never wait.

``workflow`` arguments say which workflow a call is about, as the user said it: a name, or None.
The engine selects (the named one, else the only one); with several defined and none named it
raises ``AmbiguousWorkflowError`` (exit 2, carrying the names) before it reads or writes
anything, so a caller with a user at hand may ask and call again with the answer.

An async host awaits the coroutines on its own loop. A synchronous caller (the CLI) hands them to
``run``: the engine owns the event loop they need, and the caller only hears of it through
``on_loop``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Protocol, TypeVar

from rigcli.engine.cache_admin import CacheAdmin
from rigcli.engine.connect import Connections
from rigcli.engine.diagnosis import Diagnosis
from rigcli.engine.forks import Forks
from rigcli.engine.garbage import Garbage
from rigcli.engine.history import History
from rigcli.engine.lifecycle import Lifecycle
from rigcli.engine.operations import Operations
from rigcli.engine.pictures import Pictures
from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.provenance import Drift
from rigcli.engine.reaper import Reaper
from rigcli.engine.workspaces import Workspaces
from rigcli.event_bus import EventListener
from rigcli.provider_api import Cancellation

T = TypeVar("T")


class Engine(Protocol):
    project_dir: Path
    config_path: Path
    cancellation: Cancellation  # cancel() stops running commands; the run then ends "interrupted"

    async def load(self) -> None:
        """Import rig_config.py, compile its workflows, open the state (once)."""
        ...

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every event, in emission order; returns an unsubscriber."""
        ...

    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        """Run one of this engine's coroutines from synchronous code, to its result.

        It is driven without an event loop until it needs one (a cached plan, a fork's sync create
        hook never does), then on the engine's own loop, kept until ``close()``. ``on_loop(True)``
        comes right before project code may run (on the loop, or on a hook's thread while driven
        by hand), ``on_loop(False)`` once it no longer can.
        """
        ...

    def interrupt(self) -> None:
        """The graceful stop (any thread): ``cancellation`` is set, so running commands are killed and
        lock waits end, and the coroutine ``run`` is running is cancelled; its node ends ``interrupted``."""
        ...

    def close(self) -> None: ...

    # -- the parts, each owning one thing (engine/facade.py lists them) ----------------------------
    @property
    def project(self) -> Project:
        """The loaded config and workflows, the state, and which workflow a call means (``select``)."""
        ...

    @property
    def planner(self) -> Planner: ...
    @property
    def workspaces(self) -> Workspaces: ...
    @property
    def lifecycle(self) -> Lifecycle: ...
    @property
    def forks(self) -> Forks: ...
    @property
    def drift(self) -> Drift: ...
    @property
    def reaper(self) -> Reaper: ...
    @property
    def operations(self) -> Operations: ...
    @property
    def cache(self) -> CacheAdmin: ...
    @property
    def garbage(self) -> Garbage: ...
    @property
    def diagnosis(self) -> Diagnosis: ...
    @property
    def history(self) -> History: ...
    @property
    def pictures(self) -> Pictures: ...
    @property
    def connections(self) -> Connections: ...


__all__ = ["Engine"]
