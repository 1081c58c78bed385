"""Run whole processes and measure them: wall time and peak RSS (via os.wait4), interleaved, with timeouts."""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

TAIL_BYTES = 4096
KILL_GRACE_S = 5.0  # after SIGTERM, before SIGKILL: long enough for rig's graceful interrupt


@dataclass(frozen=True)
class Invocation:
    """One process to start: argv, working directory and the complete environment."""

    argv: Sequence[str]
    cwd: Path
    env: dict[str, str]


@dataclass
class Command:
    """What one side of a comparison runs: one or more invocations, one after another or all at once."""

    label: str
    invocations: list[Invocation]
    concurrent: bool = False
    before: Callable[[], None] | None = None  # untimed, before every run (reset state, remove leftovers)
    after: Callable[[], None] | None = None  # untimed, after every run


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_rss_kb: int
    failure: str | None = None


@dataclass
class Series:
    """The timed runs of one command (warm-ups excluded) and the first failure, if any."""

    command: Command
    samples: list[Sample] = field(default_factory=list)
    failure: str | None = None

    @property
    def median_s(self) -> float | None:
        return statistics.median(s.seconds for s in self.samples) if self.samples else None

    @property
    def peak_rss_mb(self) -> float | None:
        return max(s.peak_rss_kb for s in self.samples) / 1024 if self.samples else None


class _Drain(threading.Thread):
    """Reads a pipe to EOF so the child never blocks on a full pipe; keeps the byte count and a tail."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.count = 0
        self.tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 16):
                self.count += len(chunk)
                self.tail.append(chunk)
                self._tail_size += len(chunk)
                while self._tail_size - len(self.tail[0]) >= TAIL_BYTES:
                    self._tail_size -= len(self.tail.popleft())
        finally:
            os.close(self.fd)

    def text(self) -> str:
        return b"".join(self.tail)[-TAIL_BYTES:].decode("utf-8", "replace")


@dataclass
class _Running:
    invocation: Invocation
    process: subprocess.Popen[bytes]
    drains: list[_Drain]
    reaped: bool = False


def _spawn(invocation: Invocation) -> _Running:
    # Own session: a timeout can signal the whole process group, never our own.
    process = subprocess.Popen(
        list(invocation.argv),
        cwd=invocation.cwd,
        env=invocation.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    drains = [_Drain(os.dup(process.stdout.fileno())), _Drain(os.dup(process.stderr.fileno()))]
    process.stdout.close()
    process.stderr.close()
    for drain in drains:
        drain.start()
    return _Running(invocation, process, drains)


class _Watchdog:
    """Signals every still-running process group once the deadline passes: SIGTERM, then SIGKILL."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.fired = False
        self.lock = threading.Lock()
        self.running: list[_Running] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        if self._done.wait(self.timeout):
            return
        self.fired = True
        for sig, pause in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 0.0)):
            with self.lock:
                for item in self.running:
                    if not item.reaped:  # a reaped pid may already belong to someone else
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(item.process.pid, sig)
            if self._done.wait(pause):
                return

    def stop(self) -> None:
        self._done.set()

    def kill_all(self) -> None:
        """On Ctrl-C in the benchmark itself: children live in their own sessions, so take them down here."""
        with self.lock:
            for item in self.running:
                if not item.reaped:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(item.process.pid, signal.SIGKILL)
                    os.waitpid(item.process.pid, 0)
                    item.reaped = True
                    item.process.returncode = -signal.SIGKILL


def _reap(item: _Running, watchdog: _Watchdog) -> tuple[int, int]:
    """Wait for one child; returns (exit status as a returncode, peak RSS in KiB of it and its reaped children)."""
    _, status, usage = os.wait4(item.process.pid, 0)
    with watchdog.lock:
        item.reaped = True
    code = os.waitstatus_to_exitcode(status)
    item.process.returncode = code  # so Popen never waits for a pid that is gone
    # ru_maxrss is KiB on Linux, bytes on macOS.
    rss_kb = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    return code, rss_kb


def _failure(item: _Running, code: int) -> str:
    lines = [line for line in item.drains[1].text().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else "(no stderr)"
    return f"{Path(item.invocation.argv[0]).name} exited {code}: {last[:200]}"


def run_once(command: Command, timeout: float) -> Sample:
    """One timed run of a command (all its invocations); ``before``/``after`` are not timed."""
    if command.before is not None:
        command.before()
    watchdog = _Watchdog(timeout)
    failure: str | None = None
    peak = 0
    start = time.perf_counter()
    try:
        if command.concurrent:
            with watchdog.lock:
                watchdog.running = [_spawn(inv) for inv in command.invocations]
            results = [(item, *_reap(item, watchdog)) for item in list(watchdog.running)]
        else:
            results = []
            for invocation in command.invocations:
                item = _spawn(invocation)
                with watchdog.lock:
                    watchdog.running.append(item)
                results.append((item, *_reap(item, watchdog)))
                if results[-1][1] != 0:
                    break
        seconds = time.perf_counter() - start
    except BaseException:
        watchdog.kill_all()
        raise
    finally:
        watchdog.stop()
    for item, code, rss_kb in results:
        for drain in item.drains:  # EOF follows exit unless a grandchild kept the pipe open
            drain.join(KILL_GRACE_S)
        peak = max(peak, rss_kb)
        if failure is None and code != 0:
            failure = _failure(item, code)
    if watchdog.fired:
        failure = f"timeout after {timeout:g} s (peak RSS by then {peak / 1024:.0f} MB)"
    if command.after is not None:
        command.after()
    return Sample(seconds, peak, failure)


def run_interleaved(commands: list[Command], *, repeat: int, warmup: int, timeout: float) -> list[Series]:
    """Run A B C, A B C, ... so drift on a noisy machine hits every command alike; stop at the first failure."""
    series = [Series(command) for command in commands]
    for round_index in range(warmup + repeat):
        for entry in series:
            sample = run_once(entry.command, timeout)
            if sample.failure is not None:
                entry.failure = sample.failure
                return series
            if round_index >= warmup:
                entry.samples.append(sample)
    return series


__all__ = ["Command", "Invocation", "Sample", "Series", "run_interleaved", "run_once"]
