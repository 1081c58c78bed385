"""What a run reports: the machine it ran on, the results table, and the one JSON document for machines."""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.fixtures import REPO_ROOT, base_env, python_executable, rig_argv
from benchmarks.suite import Row

NOTE_WIDTH = 100  # the JSON document keeps the whole note
COLUMNS = ("case", "rig median", "baseline median", "ratio", "target", "result", "peak RSS rig / base", "note")


def _output(argv: list[str], cwd: str | None = None) -> str:
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=base_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _rig_checkout() -> Path:
    """The directory rig is imported from (the measured code), which need not be this package's checkout."""
    spec = importlib.util.find_spec("rigcli")
    return Path(spec.origin).parents[1] if spec is not None and spec.origin else REPO_ROOT


def describe_install(kind: str) -> dict[str, Any]:
    """The rig being timed and its interpreter (the ``python -c pass`` baseline)."""
    version = _output([python_executable(), "-c", "import platform; print(platform.python_version())"])
    return {
        "install": kind,
        "python": f"{version or platform.python_version()} ({python_executable()})",
        "rig": _output([*rig_argv(), "--version"]) or "unknown",
        "rig_command": " ".join(rig_argv()),
    }


def describe_machine() -> dict[str, Any]:
    checkout = str(_rig_checkout())
    commit = _output(["git", "rev-parse", "--short", "HEAD"], cwd=checkout)
    changed = _output(["git", "status", "--porcelain", "--untracked-files=no", "--", "rigcli", "providers"], checkout)
    if commit and changed:
        commit += " (with uncommitted changes)"
    terraform = shutil.which("terraform")
    return {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "platform": platform.platform(),
        "rig_source": checkout,
        "git_commit": commit or "unknown",
        "terraform": _output([terraform, "version"]).splitlines()[0] if terraform else None,
    }


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _cells(row: Row, show_install: bool) -> list[str]:
    rss = "—"
    if row.rig is not None or row.baseline is not None:
        rig_mb = f"{row.rig.peak_rss_mb:.0f}" if row.rig else "—"
        base_mb = f"{row.baseline.peak_rss_mb:.0f}" if row.baseline else "—"
        rss = f"{rig_mb} / {base_mb} MB"
    return [
        f"{row.title} ({row.install})" if show_install else row.title,
        _seconds(row.rig.median_s if row.rig else None),
        _seconds(row.baseline.median_s if row.baseline else None),
        "—" if row.ratio is None else f"{row.ratio:.2f}",
        row.target.text(),
        row.status,
        rss,
        row.note if len(row.note) <= NOTE_WIDTH else row.note[: NOTE_WIDTH - 1] + "…",
    ]


def table(rows: list[Row]) -> str:
    """A Markdown table, aligned for reading in a terminal and pasteable as is."""
    show_install = len({row.install for row in rows}) > 1
    body = [list(COLUMNS), *(_cells(row, show_install) for row in rows)]
    widths = [max(len(cells[index]) for cells in body) for index in range(len(COLUMNS))]
    numeric = {1, 2, 3}

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        padded = [cell.rjust(width) if i in numeric else cell.ljust(width) for i, (cell, width) in pairs]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if i in numeric else "-" * (w + 2) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(body[0]), rule, *(line(cells) for cells in body[1:])])


def header(machine: dict[str, Any], options: dict[str, Any]) -> str:
    lines = [
        f"machine: {machine['cores']} cores, {machine['cpu']}, {machine['platform']}",
        f"source:  commit {machine['git_commit']} in {machine['rig_source']}",
    ]
    for timed in machine["installs"]:
        lines += [
            f"rig ({timed['install']} install): {timed['rig']}, {timed['rig_command']}",
            f"  baseline python: {timed['python']}",
        ]
    lines += [
        f"terraform: {machine['terraform'] or 'not found'}",
        f"runs:    {options['warmup']} warm-up + {options['repeat']} timed per command, interleaved; "
        f"timeout {options['timeout']:g} s per run{'; quick sizes' if options['quick'] else ''}",
    ]
    return "\n".join(lines)


def summary(rows: list[Row], elapsed_s: float) -> str:
    counts = {status: sum(1 for row in rows if row.status == status) for status in ("pass", "fail", "skip")}
    return f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped in {elapsed_s:.0f} s"


def document(machine: dict[str, Any], options: dict[str, Any], rows: list[Row], elapsed_s: float) -> dict[str, Any]:
    return {
        "machine": machine,
        "options": options,
        "rows": [row.to_json() for row in rows],
        "elapsed_s": round(elapsed_s, 2),
    }


__all__ = ["describe_install", "describe_machine", "document", "header", "summary", "table"]
