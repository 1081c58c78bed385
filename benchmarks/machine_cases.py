"""The local-machine cases: command output through machine.exec, and forking local snapshots."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from benchmarks.fixtures import EXEC_CONFIG, Project, base_env, snapshot_tree_config
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Side, Target, paired_difference

MB = 1_000_000
LINE = "a" * 99  # with yes's newline, the 100-byte lines the exec fixture prints


def _megabytes(size: int) -> str:
    return f"{size / MB:g} MB" if size < 1000 * MB else f"{size / (1000 * MB):g} GB"


def run_exec_plain(ctx: Context, case: Case) -> list[Row]:
    project = Project.create(ctx.root, "exec-plain", EXEC_CONFIG)
    rows: list[Row] = []
    for size in (1 * MB, 10 * MB) if ctx.quick else (10 * MB, 40 * MB, 200 * MB):
        title = f"{_megabytes(size)} of command output through `machine.exec`, plain renderer, piped"
        if rows and rows[-1].status == "fail" and "timeout" in rows[-1].note:
            # Output cost only grows with size: do not spend another timeout per repeat learning that.
            rows.append(case.row(title=title, status="fail", note="not run: a smaller size already timed out"))
            continue
        bytes_env = {"RIG_BENCH_BYTES": str(size)}
        plain = Command("rig apply (plain)", [project.invocation("apply", plain=True, **bytes_env)])
        machine = Command("rig --json apply", [project.invocation("--json", "apply", **bytes_env)])
        rows.append(ctx.compare(case, plain, machine, title=title))
    return rows


def run_exec_throughput(ctx: Context, case: Case) -> list[Row]:
    size = ctx.size(1000 * MB, 50 * MB)
    project = Project.create(ctx.root, "exec-throughput", EXEC_CONFIG)
    loaded = Command(
        f"rig --json apply ({_megabytes(size)})", [project.invocation("--json", "apply", RIG_BENCH_BYTES=str(size))]
    )
    empty = Command("rig --json apply (0 B)", [project.invocation("--json", "apply", RIG_BENCH_BYTES="0")])
    # The same producer as the task's command, with cat as the consumer instead of rig.
    shell = Command(
        "shell pipe into cat",
        [
            Invocation(["sh", "-c", f"yes {LINE} | head -c {size} | cat >/dev/null"], ctx.root, base_env()),
        ],
    )
    loaded_series, empty_series, shell_series = ctx.measure([loaded, empty, shell])
    title = f"{_megabytes(size)} through `machine.exec`, `--json`, minus the same with 0 bytes"
    row = case.row(title=title)
    failed = next((s for s in (loaded_series, empty_series, shell_series) if s.failure), None)
    if failed is not None:
        row.status, row.note = "fail", f"{failed.command.label}: {failed.failure}"
        return [row]
    row.rig = paired_difference(loaded_series, empty_series, f"marginal: {loaded.label} − {empty.label}")
    row.baseline = Side.of(shell_series)
    shell_median = row.baseline.median_s
    if row.rig.median_s <= 0:
        row.status, row.note = "fail", "the marginal time came out ≤ 0: too noisy, raise --repeat"
        return [row]
    # Throughput ratio: (bytes / rig's marginal time) / (bytes / the shell's time).
    row.ratio = shell_median / row.rig.median_s
    row.status = "pass" if case.target.met(row.ratio, []) else "fail"
    row.note = f"rig {size / row.rig.median_s / MB:,.0f} MB/s vs shell {size / shell_median / MB:,.0f} MB/s"
    return [row]


def snapshot_project(ctx: Context, name: str, files: int, total_bytes: int) -> tuple[Project, Path]:
    """A project whose cached task left a local snapshot of ``files`` files; returns it and the snapshot's files."""
    ctx.log(f"  building a local snapshot of {files:,} files, {_megabytes(total_bytes)}")
    project = Project.create(ctx.root, name, snapshot_tree_config(files, total_bytes))
    applied = json.loads(project.run("--json", "apply"))
    snapshot = project.dir / ".rig" / "snapshots" / applied["context"]["base"]["snapshot_id"] / "files"
    if not snapshot.is_dir():
        raise FileNotFoundError(f"the fixture's snapshot is not at {snapshot}")
    return project, snapshot


def run_fork_local(ctx: Context, case: Case) -> list[Row]:
    files, total = ctx.size(40_000, 2_000), ctx.size(200 * MB, 10 * MB)
    project, snapshot = snapshot_project(ctx, "fork-local", files, total)
    copy = project.dir / ".rig" / "bench-copy"  # same filesystem as rig's own machines

    def remove_workspace() -> None:
        project.run("rm", "bench", "--yes")

    def remove_copy() -> None:
        shutil.rmtree(copy)

    rig = Command("rig fork", [project.invocation("fork", "bench")], after=remove_workspace)
    baseline = Command(
        "cp -a", [Invocation(["cp", "-a", str(snapshot), str(copy)], project.dir, base_env())], after=remove_copy
    )
    title = f"`rig fork` of a {_megabytes(total)} / {files:,}-file local snapshot"
    row = ctx.compare(case, rig, baseline, title=title)
    if not row.note:
        reflinks = has_reflinks(project.dir)
        row.note = "reflinks here: a fork should be O(1)" if reflinks else "no reflinks here: both make full copies"
    return [row]


def has_reflinks(directory: Path) -> bool:
    """Whether this filesystem shares extents on copy (btrfs, xfs, ...), where a fork can cost O(1)."""
    probe, clone = directory / ".reflink-probe", directory / ".reflink-clone"
    probe.write_bytes(b"x" * 4096)
    try:
        done = subprocess.run(["cp", "--reflink=always", str(probe), str(clone)], capture_output=True, check=False)
        return done.returncode == 0
    finally:
        probe.unlink()
        clone.unlink(missing_ok=True)


def run_fork_concurrent(ctx: Context, case: Case) -> list[Row]:
    forks = 8
    project, _ = snapshot_project(ctx, "fork-concurrent", ctx.size(2_000, 200), ctx.size(20 * MB, 1 * MB))
    invocations = [project.invocation("fork", f"bench{index}") for index in range(forks)]

    def remove_all() -> None:
        project.run("rm", "--all", "--yes")

    together = Command(f"{forks} × rig fork at once", invocations, concurrent=True, after=remove_all)
    serial = Command(f"{forks} × rig fork in a row", invocations, after=remove_all)
    return [ctx.compare(case, together, serial)]


MACHINE_CASES = [
    Case(
        "exec-plain",
        "200 MB of command output through `machine.exec`, plain renderer, piped",
        "the same with `--json`",
        Target(max_ratio=3, max_rss_mb=150),
        run_exec_plain,
    ),
    Case(
        "exec-throughput",
        "1 GB through `machine.exec`, `--json`, minus the same with 0 bytes",
        "the same bytes piped into `cat` in a shell",
        Target(min_ratio=0.5),
        run_exec_throughput,
    ),
    Case(
        "fork-local",
        "`rig fork` of a 200 MB / 40,000-file local snapshot",
        "`cp -a` of the same tree",
        Target(max_ratio=1.1),
        run_fork_local,
    ),
    Case(
        "fork-concurrent",
        "8 `rig fork` at once (local)",
        "8 × one fork run serially",
        Target(max_ratio=0.6),
        run_fork_concurrent,
    ),
]

__all__ = ["MACHINE_CASES"]
