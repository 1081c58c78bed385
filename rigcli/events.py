"""Engine events: JSON-serializable dicts with a ``type`` key, delivered in emission order.

The engine never prints; it emits. Renderers (terminal, JSON lines, tests) subscribe.
Event types and their fields (all keys snake_case):

- ``plan.created`` {workflow, cached_node_count, node_count}
- ``workflow.apply.started`` {workflow, node_count};
  ``workflow.apply.completed`` {workflow, ran, cached_node_count, node_count}
- ``node.cached`` {node_path, run_id}; ``node.started`` {node_path, index, total, run_id}
- ``node.completed`` {node_path, run_id}; ``node.failed`` {node_path, error, run_id}
- ``log.output`` {node_path, stream: info|warn|stderr|debug, data}
- ``command.started`` {node_path, command_id, command, name}
- ``command.output`` {node_path, command_id, stream: stdout|stderr, data}
- ``command.completed`` {node_path, command_id, exit_code, truncated_bytes}
- ``artifact.created`` {node_path, artifact}
- ``interaction.awaiting_user`` {node_path, interaction_id, title, url, instructions}
- ``interaction.completed`` {node_path, interaction_id, title}
- ``workspace.create.started`` / ``workspace.ready`` / ``workspace.remove.started`` /
  ``workspace.remove.completed`` {workflow, workspace}
- ``workspace.operation.started`` / ``workspace.operation.completed`` {workflow, workspace, operation}
- ``operation.started`` / ``operation.completed`` {workflow, operation} (workflow-level operations)
- provider events such as ``vm.created`` {provider_id, ...}; the engine adds ``node_path``.
- ``state.warning`` {message} (e.g. a database moved aside); ``state.lock.waiting`` /
  ``state.lock.takeover`` {holder: {pid, host, command, started_at}}.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Event = dict[str, Any]
EventListener = Callable[[Event], None]


class EventBus:
    """Fan events out to listeners, one event at a time, in the order they were emitted."""

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []
        # Parallel branches emit from worker threads; one lock keeps delivery ordered.
        self._lock = threading.RLock()

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
            for listener in list(self._listeners):
                listener(event)


__all__ = ["Event", "EventBus", "EventListener"]
