"""ProjectEngine: the ``Engine`` protocol answered by the engine's parts, each owning one thing.

- ``Project`` (project.py): the loaded config and workflows, state stores, provider hub, events,
  and which workflow a command means;
- ``Planner`` (planner.py): plan and apply;
- ``Workspaces`` (workspaces.py): fork, rm, finding a workspace;
- ``Lifecycle`` (lifecycle.py): live status, stop and start, shell and exec;
- ``Forks`` (forks.py): ``fork --count``, ``--from``, ``--replace``;
- ``Drift`` (provenance.py): outdated workspaces and ``rig diff``;
- ``Reaper`` (reaper.py): expiry, by ``rig reap`` and by any command;
- ``Operations`` (operations.py): listing and running operations;
- ``CacheAdmin`` (cache_admin.py): cache entries, explain, invalidate, clear, snapshots;
- ``Garbage`` (garbage.py): ``rig gc``;
- ``Diagnosis`` (diagnosis.py): ``rig doctor``'s view of the project;
- ``Pictures`` (pictures.py): ``rig graph``, and a run's timeline and statistics;
- ``History`` (history.py): the apply history and the runs' stored output (``rig runs``, ``rig logs``);
- ``Connections`` (connect.py): the machine ``rig ssh-proxy``, ``rig forward`` and ``rig cp`` reach;
- ``Runner`` (runner.py): the event loop the engine's coroutines run on when called from
  synchronous code.

The CLI (or an embedding host) asks each part directly (``engine.planner.plan(...)``); the
engine itself only makes the parts, on first use, and owns the lifetime and the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from rigcli.engine.project import Project
from rigcli.engine.runner import Runner

if TYPE_CHECKING:
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
    from rigcli.engine.provenance import Drift
    from rigcli.engine.reaper import Reaper
    from rigcli.engine.workspaces import Workspaces

T = TypeVar("T")


class ProjectEngine:
    """A rig project's engine (implements ``rigcli.engine.api.Engine``); see ``create_engine``."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.project_dir = project.project_dir
        self.config_path = project.config_path
        self.cancellation = project.cancellation
        self.runner = Runner()
        # Loading and listening are the project's own: the engine hands them out as they are.
        self.load = project.load
        self.on_event = project.on_event

    # The parts are made, and their modules imported, when a command first needs one: a cached
    # plan needs only the planner, `rig exec` only the workspaces and their lifecycle, and each
    # part's imports are its own (the speed room's rule).
    @cached_property
    def planner(self) -> Planner:
        from rigcli.engine.planner import Planner

        return Planner(self.project)

    @cached_property
    def workspaces(self) -> Workspaces:
        from rigcli.engine.workspaces import Workspaces

        return Workspaces(self.project, lambda: self.planner)

    @cached_property
    def lifecycle(self) -> Lifecycle:
        from rigcli.engine.lifecycle import Lifecycle

        return Lifecycle(self.project, self.workspaces)

    @cached_property
    def forks(self) -> Forks:
        from rigcli.engine.forks import Forks

        return Forks(self.project, self.planner, self.workspaces)

    @cached_property
    def drift(self) -> Drift:
        from rigcli.engine.provenance import Drift

        return Drift(self.project, self.planner, self.workspaces)

    @cached_property
    def reaper(self) -> Reaper:
        from rigcli.engine.reaper import Reaper

        return Reaper(self.project, self.workspaces)

    @cached_property
    def operations(self) -> Operations:
        from rigcli.engine.operations import Operations

        return Operations(self.project, lambda: self.planner, self.workspaces, self.lifecycle)

    @cached_property
    def cache(self) -> CacheAdmin:
        from rigcli.engine.cache_admin import CacheAdmin

        return CacheAdmin(self.project, self.planner)

    @cached_property
    def garbage(self) -> Garbage:
        from rigcli.engine.garbage import Garbage

        return Garbage(self.project)

    @cached_property
    def diagnosis(self) -> Diagnosis:
        from rigcli.engine.diagnosis import Diagnosis

        return Diagnosis(self.project)

    @cached_property
    def history(self) -> History:
        from rigcli.engine.history import History

        return History(self.project, self.cache)

    @cached_property
    def pictures(self) -> Pictures:
        from rigcli.engine.pictures import Pictures

        return Pictures(self.project, self.history)

    @cached_property
    def connections(self) -> Connections:
        from rigcli.engine.connect import Connections

        return Connections(self.project, self.workspaces, self.lifecycle)

    # -- lifetime, events and the event loop ------------------------------------------------------
    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        return self.runner.run(coro, on_loop=on_loop)

    def interrupt(self) -> None:
        self.cancellation.cancel()
        self.runner.cancel()

    def close(self) -> None:
        try:
            self.project.close_stores()
        finally:
            self.runner.close()


__all__ = ["ProjectEngine"]
