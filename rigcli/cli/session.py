"""One command's view of a project: global options, the loaded engine, signals, children and a user's picks."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, TypeVar

from rigcli.children import ChildGuard
from rigcli.cli.interrupts import Interrupted, Interrupts, interrupted_error
from rigcli.cli.spec import GlobalOptions  # the options reach a Session parsed by the command table
from rigcli.cli.terminal_host import CliHost
from rigcli.discovery import ProjectLocation, find_project, locate_state
from rigcli.errors import AmbiguousWorkflowError, AmbiguousWorkspaceError, InterruptedRunError
from rigcli.events import Event, StateLockTakeover, StateLockWaiting, StateWarning, WorkspaceReaped
from rigcli.speed import signals

if TYPE_CHECKING:
    from rigcli.engine.api import Engine
    from rigcli.state_location import StateLocation

T = TypeVar("T")


def _terminal_text(text: str) -> str:
    """Raw task output as it may reach a terminal: colour at most (see sanitize.py)."""
    from rigcli.render.console import no_color
    from rigcli.sanitize import sanitize

    return sanitize(text, colour=not no_color())


class Session:
    """Finds the project and loads the engine on first use; closes both on exit."""

    def __init__(self, opts: GlobalOptions, *, relay: bool = True) -> None:
        self.opts = opts
        self._relay = relay  # False: fd 1 and 2 stay the process's own (rig shell/exec) until relay_output()
        self.host = CliHost()
        self._location: ProjectLocation | None = None
        self._state: StateLocation | None = None
        self._engine: Engine | None = None
        self._watching = False
        self._output_lost: int | None = None  # errno of a failed write of ours: nobody reads what we print
        self._interrupts = Interrupts(self._interrupt, on_noticed=self._decide_stop)
        self._children = ChildGuard()  # armed when the engine hands over to its event loop
        self._stdout = contextlib.ExitStack()
        # Expiry: any command that loads the project first reaps what is due (engine/reaper.py),
        # unless its body says otherwise before it touches the engine (``rig reap`` does it itself).
        self.reap_on_load = True

    def __enter__(self) -> Session:
        if self.opts.json:
            from rigcli.cli.output import json_stdout

            self._stdout.enter_context(json_stdout())  # stdout is the one document (see output.py)
        if self._relay:
            self.relay_output()
        return self

    def relay_output(self) -> None:
        """From now on fd 1 and 2 pass the secret masker, and reach a terminal without control
        sequences (streams.py); every command but a program attached by shell/exec does this."""
        from rigcli.streams import relayed_output

        self._relay = True
        self._stdout.enter_context(relayed_output(_terminal_text))

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        try:
            self.close()
        finally:
            self._stdout.close()
        if isinstance(exc, Interrupted):  # outside an engine call (a prompt, say): same line and code
            raise interrupted_error(exc.signum) from None

    def expect_project_code(self) -> None:
        """The command is sure to run project code (a hook, an operation): let the child guard's
        watchdog start now, while rig loads, rather than beside that code's first work."""
        self._children.prepare()

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
            from rigcli.engine import create_engine

            location = self.location
            engine = create_engine(
                location.project_dir,
                config_path=location.config_path,
                state_path=self.state,
                local=self.host,
                lock_wait=not self.opts.no_wait,
            )
            engine.on_event(self._notice)
            if self.opts.json_stream:
                engine.on_event(self._json_stream())  # every event of every command
            self._engine = engine
            self.run(engine.load())
            if self.reap_on_load:
                self._reap(engine)
        return self._engine

    def _json_stream(self) -> Callable[[Event], None]:
        from rigcli.cli.output import write_stream_line
        from rigcli.render.stream import JsonStreamRenderer

        writer = JsonStreamRenderer(write_stream_line)

        def stream(event: Event) -> None:
            if self._output_lost is not None:
                return
            try:
                writer.handle(event)
            except OSError as exc:  # whoever read the stream is gone: stop as the renderers do
                self._output_lost = exc.errno or errno.EPIPE
                self._stop()

        return stream

    def _reap(self, engine: Engine) -> None:
        """Reap what is due, if the lock is free at once: one query when nothing is (the usual case).
        A failure is reported and the command goes on; the workspace is marked ``reap-failed``."""
        from rigcli.errors import RigError

        try:
            self.run(engine.reap(implicit=True))
        except (InterruptedRunError, KeyboardInterrupt):
            raise
        except RigError as exc:
            self._notice(StateWarning(message=f"Could not reap expired workspaces: {exc}"))

    def _notice(self, event: Event) -> None:
        """State warnings and lock waits and takeovers reach stderr in every command, even with no renderer."""
        noticed = (StateWarning, StateLockWaiting, StateLockTakeover, WorkspaceReaped)
        if self._watching or not isinstance(event, noticed):
            return
        from rigcli.render.lines import EventFormatter
        from rigcli.render.tables import print_message

        with contextlib.suppress(OSError):  # a closed stderr must not fail the engine's work
            for line in EventFormatter().lines(event):
                print_message(line.text, style=line.style)

    def run(self, coro: Coroutine[object, object, T]) -> T:
        """Run one engine coroutine to its result (``Engine.run``: no event loop until it needs one).

        The first SIGINT, SIGTERM or SIGHUP of the command is graceful (see interrupts.py): the
        engine is interrupted (running commands' process groups are killed, a wait for the state
        lock ends, the running task is cancelled so its node is recorded ``interrupted``, nothing
        new starts), and the command exits 128 + the signal's number. A second signal leaves at once.
        """
        from rigcli.speed.coroutines import is_cancellation

        interrupts = self._interrupts
        interrupts.install()
        try:
            interrupts.check()
        except InterruptedRunError:
            coro.close()
            raise
        try:
            result = self.engine.run(coro, on_loop=self._on_loop)
        except BaseException as exc:
            signum = exc.signum if isinstance(exc, Interrupted) else interrupts.received
            stopped = isinstance(exc, (InterruptedRunError, KeyboardInterrupt)) or is_cancellation(exc)
            if stopped and signum is None and self._output_lost == errno.EIO:
                signum = signals.SIGHUP  # the terminal hung up; its SIGHUP may still be on its way
            elif stopped and signum is None and self._output_lost is not None:
                raise BrokenPipeError(errno.EPIPE, "the output of rig was closed") from None
            if signum is None or not stopped:
                raise
            raise interrupted_error(signum) from None
        if interrupts.received is not None:  # what ran may have ended only because of the signal
            raise interrupted_error(interrupts.received)
        return result

    def interrupted_code(self) -> int | None:
        """128 + the signal that interrupted this command (None: none came), for a body that stops
        on its own when interrupted (``rig logs --follow``)."""
        received = self._interrupts.received
        return None if received is None else 128 + received

    def foreground(self, coro: Coroutine[object, object, T]) -> T:
        """Run an engine coroutine that hands this process's stdio to a program (``Engine.attach``):
        rig's own signal handling is set aside first, so the program's provider decides what
        Ctrl-C, SIGTERM and SIGHUP do (they reach the program)."""
        self._interrupts.uninstall()
        return self.engine.run(coro)

    def _on_loop(self, running: bool) -> None:
        """Project code may run from now on (on the engine's loop, or on a hook's thread while the
        runner waits for it), or no longer can."""
        if running:
            # From here on, what starts on this host is ours to stop when the command ends (children.py).
            self._children.arm()
        # The watcher cancels the loop's task (or ends the runner's wait); the main thread is left alone.
        self._interrupts.on_loop = running

    def _decide_stop(self, signum: int) -> None:
        """In the main thread, at once: whatever the running code returns now, the command was stopped."""
        if self._engine is not None:
            self._engine.cancellation.decide()

    def _interrupt(self, signum: int) -> None:
        """The first signal (from the signal watcher's thread): stop the engine's work, cancel its task."""
        self._stop()

    def _stop(self) -> None:
        if self._engine is not None:
            self._engine.interrupt()

    def close(self) -> None:
        self._interrupts.quiet = True  # cleaning up must not be cut short; a second signal still leaves
        engine, self._engine = self._engine, None
        if engine is not None:
            with contextlib.suppress(Exception):
                engine.close()  # its event loop too
        self._children.close()
        self._interrupts.uninstall()

    # -- selection: the engine owns the rules and their messages; a terminal user may pick -------
    def workflow_names(self) -> list[str]:
        return self.engine.workflow_names()

    def with_workflow(self, call: Callable[[str | None], T]) -> T:
        """``call(--workflow)``: the engine selects the workflow. When it finds several and none named
        (AmbiguousWorkflowError, raised before it reads or writes anything) and a user is at the
        terminal, they pick one and ``call(pick)`` runs instead."""
        try:
            return call(self.opts.workflow)
        except AmbiguousWorkflowError as exc:
            if not self.opts.interactive:
                raise
            from rigcli.render.prompts import select

            return call(select("Select workflow", [(name, "") for name in exc.workflows]))

    def workflow(self) -> str:
        """The workflow the engine selects (or the user picks), for a command that must name it
        before it acts: in a confirmation, or a default workspace name."""
        return self.with_workflow(self.engine.select_workflow)

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
        renderer = create_renderer(json_mode=self.opts.json, stream_output=stream_output, progress=self.opts.progress)

        def render(event: Event) -> None:
            if self._output_lost is not None:
                return
            try:
                renderer.handle(event)
            except OSError as exc:
                # Whoever read our output is gone (EPIPE: `rig apply | head`, exit 1; EIO: the
                # terminal hung up, exit 129). Stop as a process killed by SIGPIPE or SIGHUP
                # would, but in order: the running node is recorded interrupted, nothing new starts.
                self._output_lost = exc.errno or errno.EPIPE
                self._stop()

        unsubscribe = engine.on_event(render)
        self.host.pause = renderer.paused
        renderer.start()
        self._watching = not self.opts.json
        try:
            yield
        finally:
            self._watching = False
            unsubscribe()
            with contextlib.suppress(OSError):  # its last frame has nowhere to go once the output is gone
                renderer.stop()
            self.host.pause = None


__all__ = ["GlobalOptions", "Session"]
