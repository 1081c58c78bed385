"""Helpers for provider tests: the harness record, process liveness and memory readings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcli.event_bus import EventBus
from rigcli.events import Event
from rigcli.provider_api import Cancellation, ProviderSetup, RuntimeContext
from tests.helpers import alive


@dataclass
class Harness:
    """One provider wired the way the engine wires it, with every event kept in ``events``."""

    plugin: Any
    setup: ProviderSetup
    context: RuntimeContext
    controller: Any
    runtime: Any
    cancellation: Cancellation
    bus: EventBus
    events: list[Event] = field(default_factory=list)

    def of_type(self, kind: str) -> list[Event]:
        return [event for event in self.events if event["type"] == kind]


def process_dead(pid: int) -> bool:
    """Gone, or a zombie waiting to be reaped by init (it no longer runs)."""
    return not alive(pid)


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll a condition that another process makes true; returns whether it became true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("VmRSS missing from /proc/self/status")


class PeakRss:
    """An emit callback that keeps no output, counts streamed bytes and samples peak RSS."""

    def __init__(self) -> None:
        self.baseline = rss_bytes()
        self.peak = self.baseline
        self.streamed = 0
        self.completed: dict[str, object] = {}
        self._count = 0

    def __call__(self, event: dict[str, object]) -> None:
        if event["type"] == "command.output":
            data = event["data"]
            assert isinstance(data, str)
            self.streamed += len(data)
            self._count += 1
            if self._count % 20 == 0:
                self.peak = max(self.peak, rss_bytes())
        elif event["type"] == "command.completed":
            self.completed = dict(event)
            self.peak = max(self.peak, rss_bytes())

    @property
    def growth(self) -> int:
        return self.peak - self.baseline
