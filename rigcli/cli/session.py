"""One command's view of a project: global options, remembered answers, the loaded engine, signals, children.

A Session costs nothing until it is asked for something: a command answered from the cache
(``rigcli/cache/``) never loads the engine, and none of the engine's machinery (signal watcher,
child guard, output relay, the host) is made or imported until it does.
"""

from __future__ import annotations

import errno

from rigcli.cache.answers import Answers
from rigcli.cli.spec import GlobalOptions  # the options reach a Session parsed by the command table
from rigcli.discovery import ProjectLocation, find_project, locate_state
from rigcli.errors import AmbiguousWorkflowError, AmbiguousWorkspaceError, InterruptedRunError

# Not typing's: a command answered from the cache imports no typing (mypy reads any such name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable, Coroutine
    from typing import BinaryIO, TypeVar

    from rigcli.children import ChildGuard
    from rigcli.cli.interrupts import Interrupts
    from rigcli.cli.terminal_host import CliHost
    from rigcli.engine.api import Engine
    from rigcli.events import Event
    from rigcli.state_location import StateLocation

    T = TypeVar("T")


def _terminal_text(text: str) -> str:
    """Raw task output as it may reach a terminal: colour at most (see sanitize.py)."""
    from rigcli.render.console import no_color
    from rigcli.sanitize import sanitize

    return sanitize(text, colour=not no_color())


class Session:
    """Finds the project and loads the engine on first use; closes both on exit."""

    def __init__(self, opts: GlobalOptions, *, relay: bool = True, cache: tuple[str, ...] = ()) -> None:
        self.opts = opts
        self._relay = relay  # False: fd 1 and 2 stay the process's own (rig shell/exec) until relay_output()
        self._cache = cache  # the answers the command's row lets it take from the cache
        self._location: ProjectLocation | None = None
        self._state: StateLocation | None = None
        self._engine: Engine | None = None
        self._answers: Answers | None = None
        self._host: CliHost | None = None
        self._interrupts: Interrupts | None = None
        self._children: ChildGuard | None = None  # armed when the engine hands over to its event loop
        self._watching = False
        self._output_lost: int | None = None  # errno of a failed write of ours: nobody reads what we print
        self._stdout: contextlib.ExitStack | None = None  # what _open_output set up, undone on exit
        self._output_open = False
        # Expiry: any command that loads the project first reaps what is due (engine/reaper.py),
        # unless its body says otherwise before it touches the engine (``rig reap`` does it itself).
        self.reap_on_load = True

    def __enter__(self) -> Session:
        return self

    def _open_output(self) -> None:
        """Before the engine loads (project code may print, secrets become known): with --json, stdout is
        the one document (``output.py``), and fd 1 and 2 pass the masker (unless relay=False)."""
        if self._output_open:
            return
        self._output_open = True
        import contextlib  # only a command that loads the engine sets its output up

        self._stdout = contextlib.ExitStack()
        if self.opts.json:
            from rigcli.cli.output import json_stdout

            self._stdout.enter_context(json_stdout())
        if self._relay:
            self.relay_output()

    def leave_output_alone(self) -> None:
        """fd 1 and 2 stay the process's own (a program attached by shell/exec) until ``relay_output``."""
        self._relay = False

    def stdout_bytes(self) -> BinaryIO:
        """Where a body writes bytes that are already masked (stored output): past the output relay when
        it runs, else the process's own stdout."""
        if not self._output_open:
            import sys

            return sys.stdout.buffer
        from rigcli.streams import real_stdout

        return real_stdout().buffer

    def relay_output(self) -> None:
        """From now on fd 1 and 2 pass the secret masker, and reach a terminal without control
        sequences (streams.py); every command but a program attached by shell/exec does this."""
        from rigcli.streams import relayed_output

        self._relay = True
        if self._stdout is None:
            import contextlib

            self._stdout = contextlib.ExitStack()
        self._stdout.enter_context(relayed_output(_terminal_text))

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        try:
            self.close()
        finally:
            if self._stdout is not None:
                self._stdout.close()
        if isinstance(exc, KeyboardInterrupt):
            from rigcli.cli.interrupts import Interrupted, interrupted_error

            if isinstance(exc, Interrupted):  # outside an engine call (a prompt, say): same line and code
                raise interrupted_error(exc.signum) from None

    @property
    def host(self) -> CliHost:
        if self._host is None:
            from rigcli.cli.terminal_host import CliHost

            self._host = CliHost()
        return self._host

    @property
    def interrupts(self) -> Interrupts:
        if self._interrupts is None:
            from rigcli.cli.interrupts import Interrupts

            self._interrupts = Interrupts(self._interrupt, on_noticed=self._decide_stop)
        return self._interrupts

    @property
    def children(self) -> ChildGuard:
        if self._children is None:
            from rigcli.children import ChildGuard

            self._children = ChildGuard()
        return self._children

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

    def expect_project_code(self) -> None:
        """The command is sure to run project code (a hook, an operation): let the child guard's
        watchdog start now, while rig loads, rather than beside that code's first work."""
        self.children.prepare()

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
            from rigcli.speed.imports import import_for_the_full_way

            import_for_the_full_way()  # records and paths without their rare branches, before anything imports them
            from rigcli.engine import create_engine

            self._open_output()
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
        from rigcli.events import StateWarning
        from rigcli.records import utc_now

        if not engine.project.store.due_workspaces(utc_now()):
            return  # the usual case of every command: one indexed query, and the reaper is never imported
        try:
            self.run(engine.reaper.reap(implicit=True))
        except (InterruptedRunError, KeyboardInterrupt):
            raise
        except RigError as exc:
            self._notice(StateWarning(message=f"Could not reap expired workspaces: {exc}"))

    def _notice(self, event: Event) -> None:
        """State warnings and lock waits and takeovers reach stderr in every command, even with no renderer."""
        from rigcli.events import StateLockTakeover, StateLockWaiting, StateWarning, WorkspaceReaped

        noticed = (StateWarning, StateLockWaiting, StateLockTakeover, WorkspaceReaped)
        if self._watching or not isinstance(event, noticed):
            return
        from rigcli.render.lines import EventFormatter
        from rigcli.render.tables import print_message

        try:
            for line in EventFormatter().lines(event):
                print_message(line.text, style=line.style)
        except OSError:  # a closed stderr must not fail the engine's work
            pass

    def run(self, coro: Coroutine[object, object, T]) -> T:
        """Run one engine coroutine to its result (``Engine.run``: no event loop until it needs one).

        The first SIGINT, SIGTERM or SIGHUP of the command is graceful (see interrupts.py): the
        engine is interrupted (running commands' process groups are killed, a wait for the state
        lock ends, the running task is cancelled so its node is recorded ``interrupted``, nothing
        new starts), and the command exits 128 + the signal's number. A second signal leaves at once.
        """
        from rigcli.cli.interrupts import Interrupted, interrupted_error
        from rigcli.speed import signals
        from rigcli.speed.coroutines import is_cancellation

        interrupts = self.interrupts
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
        received = None if self._interrupts is None else self._interrupts.received
        return None if received is None else 128 + received

    def foreground(self, coro: Coroutine[object, object, T]) -> T:
        """Run an engine coroutine that hands this process's stdio to a program (``Engine.attach``):
        rig's own signal handling is set aside first, so the program's provider decides what
        Ctrl-C, SIGTERM and SIGHUP do (they reach the program)."""
        engine = self.engine
        self.interrupts.uninstall()
        return engine.run(coro)

    def _on_loop(self, running: bool) -> None:
        """Project code may run from now on (on the engine's loop, or on a hook's thread while the
        runner waits for it), or no longer can."""
        if running:
            # From here on, what starts on this host is ours to stop when the command ends (children.py).
            self.children.arm()
        # The watcher cancels the loop's task (or ends the runner's wait); the main thread is left alone.
        self.interrupts.on_loop = running

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
        if self._interrupts is not None:
            self._interrupts.quiet = True  # cleaning up must not be cut short; a second signal still leaves
        engine, self._engine = self._engine, None
        if engine is not None:
            import contextlib  # only a command that loaded the engine closes one

            with contextlib.suppress(Exception):
                engine.close()  # its event loop too
        if self._children is not None:
            self._children.close()
        if self._interrupts is not None:
            self._interrupts.uninstall()

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
            from rigcli.render.prompts import select

            return call(select("Select workflow", [(name, "") for name in exc.workflows]))

    def workflow(self) -> str:
        """The workflow the engine selects (or the user picks), for a command that must name it
        before it acts: in a confirmation, or a default workspace name."""
        return self.with_workflow(lambda workflow: self.engine.project.select(workflow).name)

    def workflow_filter(self) -> str | None:
        """For commands that cover every workflow unless --workflow narrows them."""
        if self.opts.workflow is not None:
            self.engine.project.select(self.opts.workflow)  # rejects an unknown name
        return self.opts.workflow

    def workspace_workflow(self, name: str) -> str:
        """The workflow of workspace ``name``; a terminal user picks when several workflows have one."""
        try:
            return self.engine.workspaces.workspace_workflow(name, self.workflow_filter())
        except AmbiguousWorkspaceError as exc:
            if not self.opts.interactive:
                raise
            from rigcli.render.prompts import select

            return select(f'Workspace "{name}" exists in several workflows', [(item, "") for item in exc.workflows])

    def watch(self, *, stream_output: bool = False) -> Watching:
        """Render the engine's events while the ``with`` block runs (live, plain or silent)."""
        return Watching(self, stream_output)


class Watching:
    """``Session.watch``: a renderer subscribed to the engine's events for the block."""

    def __init__(self, session: Session, stream_output: bool) -> None:
        self.session = session
        self.stream_output = stream_output
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> None:
        from rigcli.render.progress import create_renderer

        session = self.session
        engine = session.engine
        opts = session.opts
        renderer = create_renderer(json_mode=opts.json, stream_output=self.stream_output, progress=opts.progress)

        def render(event: Event) -> None:
            if session._output_lost is not None:
                return
            try:
                renderer.handle(event)
            except OSError as exc:
                # Whoever read our output is gone (EPIPE: `rig apply | head`, exit 1; EIO: the
                # terminal hung up, exit 129). Stop as a process killed by SIGPIPE or SIGHUP
                # would, but in order: the running node is recorded interrupted, nothing new starts.
                session._output_lost = exc.errno or errno.EPIPE
                session._stop()

        self.renderer = renderer
        self._unsubscribe = engine.on_event(render)
        session.host.pause = renderer.paused
        renderer.start()
        session._watching = not opts.json

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        session = self.session
        session._watching = False
        if self._unsubscribe is not None:
            self._unsubscribe()
        import contextlib  # watching needs the engine: it has been imported already

        with contextlib.suppress(OSError):  # its last frame has nowhere to go once the output is gone
            self.renderer.stop()
        session.host.pause = None


__all__ = ["GlobalOptions", "Session"]
