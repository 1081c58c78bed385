"""The suite's vocabulary: cases, targets, result rows, and the run context that measures comparisons."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.fixtures import base_env, python_executable
from benchmarks.measure import Command, Invocation, Series, run_interleaved

Status = Literal["pass", "fail", "skip"]


@dataclass(frozen=True)
class Target:
    """What a row must meet: a ratio bound (``max_ratio`` for rig/baseline times, ``min_ratio`` for throughput)."""

    max_ratio: float | None = None
    min_ratio: float | None = None
    max_rss_mb: float | None = None  # for every measured command of the row

    def text(self) -> str:
        parts = []
        if self.max_ratio is not None:
            parts.append(f"≤ {self.max_ratio:g}")
        if self.min_ratio is not None:
            parts.append(f"≥ {self.min_ratio:g}")
        if self.max_rss_mb is not None:
            parts.append(f"RSS < {self.max_rss_mb:g} MB")
        return ", ".join(parts)

    def met(self, ratio: float, peaks_mb: list[float]) -> bool:
        if self.max_ratio is not None and ratio > self.max_ratio:
            return False
        if self.min_ratio is not None and ratio < self.min_ratio:
            return False
        return self.max_rss_mb is None or all(peak < self.max_rss_mb for peak in peaks_mb)


@dataclass
class Side:
    """One side of a row as reported: its command, median, the timed samples and peak RSS."""

    command: str
    median_s: float
    samples_s: list[float]
    peak_rss_mb: float

    @classmethod
    def of(cls, series: Series) -> Side:
        assert series.median_s is not None and series.peak_rss_mb is not None
        return cls(series.command.label, series.median_s, [s.seconds for s in series.samples], series.peak_rss_mb)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "median_s": round(self.median_s, 4),
            "samples_s": [round(value, 4) for value in self.samples_s],
            "peak_rss_mb": round(self.peak_rss_mb, 1),
        }


@dataclass
class Row:
    case: str
    title: str
    baseline_title: str
    target: Target
    status: Status = "skip"
    rig: Side | None = None
    baseline: Side | None = None
    ratio: float | None = None
    note: str = ""
    install: str = ""  # which rig was timed: "regular" or "editable" (benchmarks/install.py)

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "install": self.install,
            "title": self.title,
            "baseline_title": self.baseline_title,
            "target": self.target.text(),
            "status": self.status,
            "ratio": None if self.ratio is None else round(self.ratio, 4),
            "rig": self.rig.to_json() if self.rig else None,
            "baseline": self.baseline.to_json() if self.baseline else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class Case:
    """A named comparison from the issue's table; ``run`` builds its fixtures and returns its rows."""

    name: str
    title: str
    baseline: str
    target: Target
    run: Callable[[Context, Case], list[Row]]

    def row(self, **fields: Any) -> Row:
        fields.setdefault("title", self.title)
        return Row(
            case=self.name, baseline_title=fields.pop("baseline_title", self.baseline), target=self.target, **fields
        )

    def skipped(self, reason: str) -> list[Row]:
        return [self.row(status="skip", note=f"skipped: {reason}")]


@dataclass
class Context:
    """Where fixtures go and how to measure: repeats, warm-ups, the per-run timeout, progress output."""

    root: Path
    quick: bool
    repeat: int
    warmup: int
    timeout: float
    log: Callable[[str], None]
    _shared: dict[str, Any] = field(default_factory=dict)

    def size(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def shared(self, key: str, build: Callable[[], Any]) -> Any:
        """A fixture built once per suite run and used by several cases (a 20,000-task project takes a while)."""
        if key not in self._shared:
            self._shared[key] = build()
        return self._shared[key]

    def python_pass(self) -> Command:
        # The timed rig's own interpreter, never a shim on PATH that adds its own startup.
        return Command("python -c pass", [Invocation([python_executable(), "-c", "pass"], self.root, base_env())])

    def measure(self, commands: list[Command]) -> list[Series]:
        labels = " vs ".join(command.label for command in commands)
        self.log(f"  measuring {labels} ({self.warmup} warm-up + {self.repeat} runs each, interleaved)")
        return run_interleaved(commands, repeat=self.repeat, warmup=self.warmup, timeout=self.timeout)

    def compare(self, case: Case, rig: Command, baseline: Command, **fields: Any) -> Row:
        """Measure rig against its baseline, interleaved; the row's ratio is rig median / baseline median."""
        rig_series, base_series = self.measure([rig, baseline])
        row = case.row(**fields)
        return judge(row, rig_series, base_series)


def judge(row: Row, rig: Series, baseline: Series) -> Row:
    failure = rig.failure or baseline.failure
    if rig.samples:
        row.rig = Side.of(rig)
    if baseline.samples:
        row.baseline = Side.of(baseline)
    if failure is not None:
        which = rig.command.label if rig.failure else baseline.command.label
        row.status, row.note = "fail", f"{which}: {failure}"
        return row
    assert row.rig is not None and row.baseline is not None
    row.ratio = row.rig.median_s / row.baseline.median_s
    row.status = "pass" if row.target.met(row.ratio, [row.rig.peak_rss_mb, row.baseline.peak_rss_mb]) else "fail"
    return row


def paired_difference(minuend: Series, subtrahend: Series, label: str) -> Side:
    """Per-round differences of two interleaved series (the marginal cost of what differs between them)."""
    deltas = [a.seconds - b.seconds for a, b in zip(minuend.samples, subtrahend.samples, strict=True)]
    peak = max(value for value in (minuend.peak_rss_mb, subtrahend.peak_rss_mb) if value is not None)
    return Side(label, statistics.median(deltas), deltas, peak)


__all__ = ["Case", "Context", "Row", "Side", "Status", "Target", "judge", "paired_difference"]
