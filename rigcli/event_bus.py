"""The event bus: delivers engine events to listeners in emission order, masking secrets on the way."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from rigcli import masking
from rigcli.events import CommandCompleted, CommandOutput, Event

EventListener = Callable[[Event], None]


class EventBus:
    """Fan events out to listeners, one event at a time, in the order they were emitted.

    The one masking point for events: listeners (renderers, the workspace journal, embedding
    hosts) only ever see events with registered secrets replaced by ``***``.
    """

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []
        # Parallel branches emit from worker threads; one lock keeps delivery ordered.
        self._lock = threading.RLock()
        self._streams: dict[tuple[str, str, str], masking.StreamMasker] = {}

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        with self._lock:
            for item in self._masked(event) if masking.active() else (event,):
                for listener in list(self._listeners):
                    listener(item)

    def _masked(self, event: Event) -> list[Event]:
        """``event`` masked; command output is masked as a stream, so a secret split across chunks is too."""
        if isinstance(event, CommandOutput):
            key = (event.node_path, event.command_id, event.stream)
            data = self._streams.setdefault(key, masking.StreamMasker()).feed(event.data)
            return [masking.mask_fields(dataclasses.replace(event, data=data))] if data else []
        held: list[Event] = []
        if isinstance(event, CommandCompleted):
            for key in [key for key in self._streams if key[:2] == (event.node_path, event.command_id)]:
                rest = self._streams.pop(key).flush()
                if rest:
                    held.append(CommandOutput(node_path=key[0], command_id=key[1], stream=key[2], data=rest))
        return [*held, masking.mask_fields(event)]


__all__ = ["EventBus", "EventListener"]
