"""One command's view of a project: global options, remembered answers and, on first use, the loaded engine.

A Session costs nothing until it is asked for something: a command answered from the cache
(``rigcli/cache/``) never loads the engine, and none of the engine's machinery (signal watcher,
child guard, output relay, the host: ``loaded.py``) is made or imported until it does.
"""

from __future__ import annotations

import sys

from rigcli.cache.answers import Answers
from rigcli.cli.spec import GlobalOptions  # the options reach a Session parsed by the command table
from rigcli.discovery import ProjectLocation, find_project, locate_state
from rigcli.errors import AmbiguousWorkflowError, AmbiguousWorkspaceError
from rigcli.render.prompts import select

# Not typing's: a command answered from the cache imports no typing (mypy reads any such name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import BinaryIO, TypeVar

    from rigcli.cli.loaded import LoadedSession, Watching
    from rigcli.engine.api import Engine
    from rigcli.state_location import StateLocation

    T = TypeVar("T")


class Session:
    """Finds the project and loads the engine on first use; closes both on exit."""

    def __init__(self, opts: GlobalOptions, *, relay: bool = True, cache: tuple[str, ...] = ()) -> None:
        self.opts = opts
        self._relay = relay  # False: fd 1 and 2 stay the process's own (rig shell/exec) until relay_output()
        self._cache = cache  # the answers the command's row lets it take from the cache
        self._location: ProjectLocation | None = None
        self._state: StateLocation | None = None
        self._answers: Answers | None = None
        self._loaded: LoadedSession | None = None
        self._engine: Engine | None = None
        # Expiry: any command that loads the project first reaps what is due (engine/reaper.py),
        # unless its body says otherwise before it touches the engine (``rig reap`` does it itself).
        self.reap_on_load = True
        # A body that needs only the state sets this first: a config that fails to import does not stop it
        # (a string: what the body does instead, said on the warning that names the config's error).
        self.config_optional: bool | str = False

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        self.close()

    @property
    def loaded(self) -> LoadedSession:
        """The engine side (``loaded.py``), made on first use."""
        if self._loaded is None:
            from rigcli.speed.imports import import_for_the_full_way

            import_for_the_full_way()  # records and paths without their rare branches, before anything imports them
            from rigcli.cli.loaded import LoadedSession

            self._loaded = LoadedSession(self.opts, relay=self._relay)
        return self._loaded

    @property
    def answers(self) -> Answers:
        """The answers the command may take from the cache (its row's ``cache``), else computed."""
        if self._answers is None:
            opts = self.opts
            self._answers = Answers(
                self,
                chdir=opts.chdir,
                config=opts.config,
                state=opts.state,
                workflow=opts.workflow,
                may_recall=bool(self._cache) and not opts.json_stream,
            )
        return self._answers

    @property
    def location(self) -> ProjectLocation:
        if self._location is None:
            self._location = find_project(chdir=self.opts.chdir, config=self.opts.config, state=self.opts.state)
        return self._location

    @property
    def state(self) -> StateLocation:
        """Where the project's state lives (``--state``, ``RIG_STATE_URL`` here or in ``.env``, or ``.rig/``)."""
        if self._state is None:
            self._state = locate_state(self.location)
        return self._state

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = self.loaded.load(
                self.location, self.state, reap=self.reap_on_load, config_optional=self.config_optional
            )
        return self._engine

    # -- running the engine's work (loaded.py) ------------------------------------------------------
    def run(self, coro: Coroutine[object, object, T]) -> T:
        """Run one engine coroutine to its result, a first signal stopping it gracefully (``loaded.py``)."""
        return self.loaded.run(coro)

    def foreground(self, coro: Coroutine[object, object, T]) -> T:
        """Run an engine coroutine that hands this process's stdio to a program (``Engine.attach``)."""
        return self.loaded.foreground(coro)

    def watch(self, *, stream_output: bool = False) -> Watching:
        """Render the engine's events while the ``with`` block runs (live, plain or silent)."""
        if self._engine is None:
            self._engine = self.engine  # its events are what is rendered
        return self.loaded.watch(stream_output=stream_output)

    def interrupted_code(self) -> int | None:
        """128 + the signal that interrupted this command (None: none came), for a body that stops
        on its own when interrupted (``rig logs --follow``)."""
        received = None if self._loaded is None else self._loaded.interrupts.received
        return None if received is None else 128 + received

    def expect_project_code(self) -> None:
        """The command is sure to run project code (a hook, an operation): let the child guard's
        watchdog start now, while rig loads, rather than beside that code's first work."""
        self.loaded.children.prepare()

    # -- rig's own output --------------------------------------------------------------------------
    def leave_output_alone(self) -> None:
        """fd 1 and 2 stay the process's own (a program attached by shell/exec) until ``relay_output``."""
        self._relay = False

    def relay_output(self) -> None:
        """From now on fd 1 and 2 pass the secret masker (``streams.py``)."""
        self.loaded.relay_output()

    def stdout_bytes(self) -> BinaryIO:
        """Where a body writes bytes that are already masked (stored output): past the output relay when
        it runs, else the process's own stdout."""
        return sys.stdout.buffer if self._loaded is None else self._loaded.stdout_bytes()

    def close(self) -> None:
        self._engine = None
        if self._loaded is not None:
            self._loaded.close()

    # -- selection: the engine owns the rules and their messages; a terminal user may pick -------
    def workflow_names(self) -> list[str]:
        return self.engine.project.workflow_names()

    def with_workflow(self, call: Callable[[str | None], T]) -> T:
        """``call(--workflow)``: the engine selects the workflow. When it finds several and none named
        (AmbiguousWorkflowError, raised before it reads or writes anything) and a user is at the
        terminal, they pick one and ``call(pick)`` runs instead."""
        try:
            return call(self.opts.workflow)
        except AmbiguousWorkflowError as exc:
            if not self.opts.interactive:
                raise

            return call(select("Select workflow", [(name, "") for name in exc.workflows]))

    def workflow(self) -> str:
        """The workflow the engine selects (or the user picks), for a command that must name it
        before it acts: in a confirmation, or a default workspace name."""
        return self.with_workflow(lambda workflow: self.engine.project.select(workflow).name)

    def workflow_filter(self) -> str | None:
        """For commands that cover every workflow unless --workflow narrows them."""
        if self.opts.workflow is not None and self.engine.project.config_error is None:
            self.engine.project.select(self.opts.workflow)  # rejects an unknown name (the config's)
        return self.opts.workflow

    def workspace_workflow(self, name: str) -> str:
        """The workflow of workspace ``name``; a terminal user picks when several workflows have one."""
        try:
            return self.engine.workspaces.workspace_workflow(name, self.workflow_filter())
        except AmbiguousWorkspaceError as exc:
            if not self.opts.interactive:
                raise

            return select(f'Workspace "{name}" exists in several workflows', [(item, "") for item in exc.workflows])


__all__ = ["GlobalOptions", "Session"]
