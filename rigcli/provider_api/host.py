"""What rig gives a provider of the user's side: its storage, the local host, interactions, cancellation."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol, TypedDict, overload

from rigcli.jsonutil import JsonValue


class StoredRecord(TypedDict):
    provider_id: str
    key: str
    value: JsonValue
    created_at: str
    updated_at: str


class KeyValueStore(Protocol):
    """Provider-owned JSON records; ``storage`` is per project, ``host_storage`` per user."""

    def get(self, key: str) -> StoredRecord | None: ...
    def set(self, key: str, value: JsonValue) -> None: ...
    def delete(self, key: str) -> bool: ...
    def entries(self, prefix: str = "") -> list[StoredRecord]: ...


class LocalHost(Protocol):
    """What the machine running rig offers handlers and providers (the user's side)."""

    @property
    def interactive(self) -> bool: ...  # a user can answer prompts and see a terminal
    def open(self, target: str) -> object: ...  # open a URL in the browser (or print it)
    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str: ...
    def confirm(self, message: str, *, default: bool = False) -> bool: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[False] = False,
    ) -> int: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[True],
    ) -> CapturedRun: ...
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: bool = False,
    ) -> int | CapturedRun:
        """Run a command attached to the user's terminal (the live view pauses); return its exit code.

        ``capture=True``: run it off the terminal (stdin empty) and return its exit code and its
        output, decoded and masked (``CapturedRun``).
        """
        ...

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        """What the project or a plugin answers for this host capability (``define_host_capability``)."""
        ...


class CapturedRun(TypedDict):
    """What ``local.run(argv, capture=True)`` returns."""

    exit_code: int
    stdout: str  # decoded as UTF-8 (undecodable bytes replaced), secrets masked
    stderr: str


class InteractionRequest(TypedDict, total=False):
    id: str
    title: str
    url: str | None
    instructions: str | None
    completed: object  # an awaitable, a concurrent.futures.Future or a zero-argument blocking callable
    stop: Callable[[], object]


class InteractionBroker(Protocol):
    async def present(self, request: InteractionRequest) -> object: ...
    def present_blocking(self, request: InteractionRequest) -> object: ...


class Cancellation:
    """Set once when the run is interrupted; providers register callbacks to stop their work."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on cancel (at once if already cancelled); returns a remover."""
        with self._lock:
            run_now = self._event.is_set()
            if not run_now:
                self._callbacks.append(callback)
        if run_now:
            callback()

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def decide(self) -> None:
        """The stop is decided: ``is_set()`` holds from now on, so nothing this run still finishes
        counts as a success. Cheap and lock-free (a signal handler calls it); the callbacks, which
        may be slow (killing process groups, asking a daemon), run at ``cancel()``."""
        self._event.set()

    def cancel(self) -> None:
        """Decide the stop and run the callbacks (once each, whoever calls first)."""
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
