"""One command's view of a project: global options, the loaded engine, its event loop and selection."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Awaitable, Coroutine, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from rigcli.cli.terminal_host import CliHost
from rigcli.discovery import ProjectLocation, find_project
from rigcli.errors import AmbiguousWorkspaceError, InterruptedRunError
from rigcli.events import Event, StateLockWaiting, StateWarning
from rigcli.host import stdio_is_terminal

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop
    from types import FrameType

    from rigcli.engine.api import Engine

T = TypeVar("T")


@dataclass(frozen=True)
class GlobalOptions:
    chdir: str | None = None
    config: str | None = None
    state: str | None = None
    json: bool = False
    workflow: str | None = None
    no_wait: bool = False

    @property
    def interactive(self) -> bool:
        """Prompts and pickers are allowed: a terminal on stdin and stderr, and not --json."""
        return not self.json and stdio_is_terminal()


class Session:
    """Finds the project and loads the engine on first use; closes both on exit."""

    def __init__(self, opts: GlobalOptions) -> None:
        self.opts = opts
        self.host = CliHost()
        self._location: ProjectLocation | None = None
        self._engine: Engine | None = None
        self._loop: AbstractEventLoop | None = None
        self._watching = False

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def location(self) -> ProjectLocation:
        if self._location is None:
            self._location = find_project(chdir=self.opts.chdir, config=self.opts.config, state=self.opts.state)
        return self._location

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from rigcli.engine import create_engine

            location = self.location
            engine = create_engine(
                location.project_dir,
                config_path=location.config_path,
                state_path=location.state_path,
                local=self.host,
                lock_wait=not self.opts.no_wait,
            )
            engine.on_event(self._notice)
            self._engine = engine
            self.run(engine.load())
        return self._engine

    def _notice(self, event: Event) -> None:
        """State warnings and lock waits reach stderr in every command, even with no renderer."""
        if self._watching or not isinstance(event, (StateWarning, StateLockWaiting)):
            return
        from rigcli.render.lines import EventFormatter
        from rigcli.render.tables import print_message

        for line in EventFormatter().lines(event):
            print_message(line.text, style=line.style)

    def run(self, coro: Coroutine[object, object, T]) -> T:
        """Run one engine coroutine: by hand while it needs no event loop, then on the session's loop.

        A cached plan or a no-op apply never needs the loop (nor asyncio's import). Until then a
        signal interrupts with its exit code at once; once the loop runs, the first
        SIGINT/SIGTERM is graceful (see ``_run_on_loop``).
        """
        from rigcli.engine.driver import drive

        with _signals_interrupt():
            return drive(coro, self._run_on_loop)

    def _run_on_loop(self, rest: Awaitable[T]) -> T:
        """Finish a coroutine on the loop, which lives as long as the session so engine state can span calls.

        The first SIGINT/SIGTERM is graceful: the engine's cancellation stops running commands
        (their process groups are killed), the running task is cancelled so its node is recorded
        ``interrupted``, and nothing new starts. A second signal leaves at once.
        """
        import asyncio

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        loop = self._loop

        async def finish() -> T:
            return await rest

        task = loop.create_task(finish())
        received: list[int] = []

        def on_signal(signum: int) -> None:
            if received:
                os._exit(128 + received[0])
            received.append(signum)
            if self._engine is not None:
                self._engine.cancellation.cancel()
            task.cancel()

        installed = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, on_signal, signum)
                installed.append(signum)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if not received:
                raise
            error = InterruptedRunError("interrupted")
            error.exit_code = 128 + received[0]
            raise error from None
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    def close(self) -> None:
        if self._engine is not None:
            with contextlib.suppress(Exception):
                self._engine.close()
            self._engine = None
        if self._loop is not None:
            loop, self._loop = self._loop, None
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    # -- selection: the engine owns the rules and their messages; a terminal user may pick -------
    def workflow_names(self) -> list[str]:
        return self.engine.workflow_names()

    def workflow(self) -> str:
        """--workflow, the only workflow, or (in a terminal) the user's pick."""
        names = self.workflow_names()
        if self.opts.workflow is None and len(names) > 1 and self.opts.interactive:
            from rigcli.render.prompts import select

            return select("Select workflow", [(name, "") for name in names])
        return self.engine.select_workflow(self.opts.workflow)

    def workflow_filter(self) -> str | None:
        """For commands that cover every workflow unless --workflow narrows them."""
        if self.opts.workflow is not None:
            self.engine.select_workflow(self.opts.workflow)  # rejects an unknown name
        return self.opts.workflow

    def workspace_workflow(self, name: str) -> str:
        """The workflow of workspace ``name``; a terminal user picks when several workflows have one."""
        try:
            return self.engine.workspace_workflow(name, self.workflow_filter())
        except AmbiguousWorkspaceError as exc:
            if not self.opts.interactive:
                raise
            from rigcli.render.prompts import select

            return select(f'Workspace "{name}" exists in several workflows', [(item, "") for item in exc.workflows])

    @contextlib.contextmanager
    def watch(self, *, stream_output: bool = False) -> Iterator[None]:
        """Render the engine's events while the block runs (live, plain or silent)."""
        from rigcli.render.progress import create_renderer

        engine = self.engine
        renderer = create_renderer(json_mode=self.opts.json, stream_output=stream_output)
        unsubscribe = engine.on_event(renderer.handle)
        self.host.pause = renderer.paused
        renderer.start()
        self._watching = not self.opts.json
        try:
            yield
        finally:
            self._watching = False
            unsubscribe()
            renderer.stop()
            self.host.pause = None


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """While no event loop runs: SIGTERM ends the command as interrupted (143), like Ctrl-C (130)."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        error = InterruptedRunError("interrupted")
        error.exit_code = 128 + signum
        raise error

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (an embedding host): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["GlobalOptions", "Session"]
