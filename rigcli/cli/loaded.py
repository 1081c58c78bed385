"""The engine side of a command's session: the engine made and loaded, its coroutines run under the signal
watcher and the child guard, its events noticed, streamed and rendered, and rig's output relayed.

``Session`` (``session.py``) makes one only when a command loads the engine: a command answered from
the cache imports none of this.
"""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from rigcli.children import ChildGuard
from rigcli.cli import signalled
from rigcli.cli.interrupts import Interrupts, interrupted_error
from rigcli.cli.json_output import json_stdout
from rigcli.cli.output import write_stream_line
from rigcli.cli.signalled import Interrupted
from rigcli.cli.spec import GlobalOptions
from rigcli.cli.terminal_host import CliHost
from rigcli.engine import create_engine
from rigcli.errors import InterruptedRunError, RigError
from rigcli.events import (
    ArtifactUnconfirmed,
    Event,
    StateLockTakeover,
    StateLockWaiting,
    StateWarning,
    WorkspaceReaped,
)
from rigcli.records import utc_now
from rigcli.render.console import no_color
from rigcli.render.lines import EventFormatter
from rigcli.render.progress import create_renderer
from rigcli.render.stream import JsonStreamRenderer
from rigcli.render.tables import print_message
from rigcli.sanitize import sanitize
from rigcli.speed import signals
from rigcli.speed.coroutines import is_cancellation
from rigcli.streams import real_stdout, relayed_output

if TYPE_CHECKING:
    from rigcli.discovery import ProjectLocation
    from rigcli.engine.api import Engine
    from rigcli.state_location import StateLocation

T = TypeVar("T")


def _terminal_text(text: str) -> str:
    """Raw task output as it may reach a terminal: colour at most (see sanitize.py)."""
    return sanitize(text, colour=not no_color())


class LoadedSession:
    """One command's engine and everything that comes with running it; ``close`` undoes it all."""

    def __init__(self, opts: GlobalOptions, *, relay: bool) -> None:
        self.opts = opts
        self.relay = relay  # False: fd 1 and 2 stay the process's own (rig shell/exec) until relay_output()
        self.host = CliHost()
        self.interrupts = Interrupts(self._interrupt, on_noticed=self._decide_stop)
        self.children = ChildGuard()  # armed when the engine hands over to its event loop
        self.engine_made: Engine | None = None
        self.watching = False
        self.output_lost: int | None = None  # errno of a failed write of ours: nobody reads what we print
        self.output = contextlib.ExitStack()  # what open_output set up, undone on close
        self.output_open = False

    def open_output(self) -> None:
        """Before the engine loads (project code may print, secrets become known): with --json, stdout is
        the one document (``output.py``), and fd 1 and 2 pass the masker (unless relay is False)."""
        if self.output_open:
            return
        self.output_open = True
        with signalled.deferred():  # see relay_output
            if self.opts.json:
                self.output.enter_context(json_stdout())
            if self.relay:
                self.relay_output()
        signalled.check()

    def relay_output(self) -> None:
        """From now on fd 1 and 2 pass the secret masker, and reach a terminal without control
        sequences (streams.py); every command but a program attached by shell/exec does this."""
        self.relay = True
        # Set up whole, and registered to be undone, before a signal may unwind: a relay left half
        # made would keep fd 2 on a pipe nobody reads, and the command's last line would be lost.
        with signalled.deferred():
            self.output.enter_context(relayed_output(_terminal_text))
        signalled.check()

    def stdout_bytes(self) -> BinaryIO:
        """Where already masked bytes go: past the output relay when it runs."""
        return real_stdout().buffer if self.output_open else sys.stdout.buffer

    def load(
        self, location: ProjectLocation, state: StateLocation, *, reap: bool, config_optional: bool | str = False
    ) -> Engine:
        """Make the engine, load the project (its config imported, its state opened) and reap what is due.
        ``config_optional``: a config that fails to import leaves no workflows (and nothing is reaped:
        a remove hook is the config's)."""
        self.open_output()
        engine = create_engine(
            location.project_dir,
            config_path=location.config_path,
            state_path=state,
            local=self.host,
            lock_wait=not self.opts.no_wait,
        )
        engine.on_event(self._notice)
        if self.opts.json_stream:
            engine.on_event(self._json_stream())  # every event of every command
        self.engine_made = engine
        engine.project.config_optional = config_optional
        self.run(engine.load())
        if reap and engine.project.config_error is None:
            self._reap(engine)
        return engine

    @property
    def engine(self) -> Engine:
        assert self.engine_made is not None, "load() first"
        return self.engine_made

    def _json_stream(self) -> Callable[[Event], None]:
        writer = JsonStreamRenderer(write_stream_line)

        def stream(event: Event) -> None:
            if self.output_lost is not None:
                return
            try:
                writer.handle(event)
            except OSError as exc:  # whoever read the stream is gone: stop as the renderers do
                self.output_lost = exc.errno or errno.EPIPE
                self.stop()

        return stream

    def _reap(self, engine: Engine) -> None:
        """Reap what is due, if the lock is free at once: one query when nothing is (the usual case).
        A failure is reported and the command goes on; the workspace is marked ``reap-failed``."""
        if not engine.project.store.due_workspaces(utc_now()):
            return  # the usual case of every command: one indexed query, and the reaper is never imported
        try:
            self.run(engine.reaper.reap(implicit=True))
        except (InterruptedRunError, KeyboardInterrupt):
            raise
        except RigError as exc:
            if self.interrupts.received is not None:
                raise  # a signal, surfaced as another error: no warning, the command was interrupted
            self._notice(StateWarning(message=f"Could not reap expired workspaces: {exc}"))

    def _notice(self, event: Event) -> None:
        """Warnings (the state's, an artifact's that could not be checked) and lock waits and takeovers
        reach stderr in every command, even with no renderer."""
        noticed = (StateWarning, ArtifactUnconfirmed, StateLockWaiting, StateLockTakeover, WorkspaceReaped)
        if self.watching or not isinstance(event, noticed):
            return
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
            if stopped and signum is None and self.output_lost == errno.EIO:
                signum = signals.SIGHUP  # the terminal hung up; its SIGHUP may still be on its way
            elif stopped and signum is None and self.output_lost is not None:
                raise BrokenPipeError(errno.EPIPE, "the output of rig was closed") from None
            if signum is None or not stopped:
                raise
            raise interrupted_error(signum) from None
        if interrupts.received is not None:  # what ran may have ended only because of the signal
            raise interrupted_error(interrupts.received)
        return result

    def foreground(self, coro: Coroutine[object, object, T]) -> T:
        """Run an engine coroutine that hands this process's stdio to a program (``Engine.attach``):
        rig's own signal handling is set aside first, so the program's provider decides what
        Ctrl-C, SIGTERM and SIGHUP do (they reach the program)."""
        self.interrupts.uninstall()
        return self.engine.run(coro)

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
        if self.engine_made is not None:
            self.engine_made.cancellation.decide()

    def _interrupt(self, signum: int) -> None:
        """The first signal (from the signal watcher's thread): stop the engine's work, cancel its task."""
        self.stop()

    def stop(self) -> None:
        if self.engine_made is not None:
            self.engine_made.interrupt()

    def watch(self, *, stream_output: bool) -> Watching:
        return Watching(self, stream_output)

    def close(self) -> None:
        self.interrupts.quiet = True  # cleaning up must not be cut short; a second signal still leaves
        engine, self.engine_made = self.engine_made, None
        with signalled.deferred():  # nor once the engine's handlers are given back (the exit code is noted)
            try:
                if engine is not None:
                    with contextlib.suppress(Exception):
                        engine.close()  # its event loop too
                self.children.close()
                self.interrupts.uninstall()
            finally:
                self.output.close()


class Watching:
    """``Session.watch``: a renderer subscribed to the engine's events for the block."""

    def __init__(self, loaded: LoadedSession, stream_output: bool) -> None:
        self.loaded = loaded
        self.stream_output = stream_output
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> None:
        loaded = self.loaded
        opts = loaded.opts
        renderer = create_renderer(json_mode=opts.json, stream_output=self.stream_output, progress=opts.progress)

        def render(event: Event) -> None:
            if loaded.output_lost is not None:
                return
            try:
                renderer.handle(event)
            except OSError as exc:
                # Whoever read our output is gone (EPIPE: `rig apply | head`, exit 1; EIO: the
                # terminal hung up, exit 129). Stop as a process killed by SIGPIPE or SIGHUP
                # would, but in order: the running node is recorded interrupted, nothing new starts.
                loaded.output_lost = exc.errno or errno.EPIPE
                loaded.stop()

        self.renderer = renderer
        self._unsubscribe = loaded.engine.on_event(render)
        loaded.host.pause = renderer.paused
        renderer.start()
        loaded.watching = not opts.json

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        loaded = self.loaded
        loaded.watching = False
        if self._unsubscribe is not None:
            self._unsubscribe()
        with contextlib.suppress(OSError):  # its last frame has nowhere to go once the output is gone
            self.renderer.stop()
        loaded.host.pause = None


__all__ = ["LoadedSession", "Watching"]
