"""The stored-output cases: reading a run's stored output back, and what storing it costs an apply."""

from __future__ import annotations

import subprocess

from benchmarks.fixtures import EXEC_CONFIG, Project, base_env
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target

MB = 1_000_000


def run_logs_read(ctx: Context, case: Case) -> list[Row]:
    size = ctx.size(50 * MB, 5 * MB)
    project = Project.create(ctx.root, "logs-read", EXEC_CONFIG)
    # The default cap (4 MiB) would keep a fraction of it: this row raises it so every byte is stored.
    ctx.log(f"  storing {size / MB:g} MB of one run's output (RIG_LOG_CAP=64m)")
    applying = project.invocation("--json", "apply", RIG_BENCH_BYTES=str(size), RIG_LOG_CAP="64m")
    subprocess.run(
        list(applying.argv),  # its task output (on stderr, with --json) is not kept here either
        cwd=applying.cwd,
        env=applying.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    stored = project.dir / "stored-output.txt"
    # Straight into the file: 50 MB held here would count in every later child's peak RSS (a forked
    # child's high-water mark starts at its parent's), and so would the apply's output above.
    invocation = project.invocation("logs", "emit")
    with stored.open("wb") as sink:
        subprocess.run(list(invocation.argv), cwd=invocation.cwd, env=invocation.env, stdout=sink, check=True)
    if stored.stat().st_size < size:
        raise RuntimeError(f"rig logs printed {stored.stat().st_size} bytes of the {size} stored")
    rig = Command("rig logs emit", [project.invocation("logs", "emit")])
    cat = Command("cat", [Invocation(["cat", str(stored)], project.dir, base_env())])
    title = f"`rig logs TASK` of a run with {size / MB:g} MB of stored output, piped"
    return [ctx.compare(case, rig, cat, title=title)]


def run_apply_stored(ctx: Context, case: Case) -> list[Row]:
    size = ctx.size(200 * MB, 10 * MB)
    project = Project.create(ctx.root, "apply-stored", EXEC_CONFIG)
    stored = Command("rig apply (output stored)", [project.invocation("--json", "apply", RIG_BENCH_BYTES=str(size))])
    unstored = Command(
        "rig apply (RIG_LOG_CAP=0)",
        [project.invocation("--json", "apply", RIG_BENCH_BYTES=str(size), RIG_LOG_CAP="0")],
    )
    title = f"`rig --json apply` of {size / MB:g} MB of task output, its output stored (4 MiB kept)"
    return [ctx.compare(case, stored, unstored, title=title)]


HISTORY_CASES = [
    Case(
        "logs-read",
        "`rig logs TASK` of a run with 50 MB of stored output, piped",
        "`cat` of the same bytes to a pipe",
        Target(max_ratio=3),
        run_logs_read,
    ),
    Case(
        "apply-stored",
        "`rig --json apply` of 200 MB of task output, its output stored",
        "the same apply storing nothing (`RIG_LOG_CAP=0`)",
        Target(max_ratio=1.3, max_rss_mb=150),
        run_apply_stored,
    ),
]

__all__ = ["HISTORY_CASES"]
