"""The command-line cases: no-op and fresh apply against Terraform, plan cost and scaling, startup, parallelism."""

from __future__ import annotations

import shutil

from benchmarks.fixtures import (
    Project,
    TerraformProject,
    base_env,
    chain_config,
    parallel_config,
    rig_argv,
    run_checked,
)
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target

CACHED_TASKS = 200


def terraform_path() -> str | None:
    return shutil.which("terraform")


def cached_project(ctx: Context, tasks: int) -> Project:
    """A project of ``tasks`` trivial tasks, applied once so every later plan/apply is a no-op."""

    def build() -> Project:
        ctx.log(f"  building a project of {tasks} cached tasks")
        project = Project.create(ctx.root, f"cached-{tasks}", chain_config(tasks))
        project.run("--json", "apply")
        return project

    project: Project = ctx.shared(f"cached-{tasks}", build)
    return project


def run_apply_noop(ctx: Context, case: Case) -> list[Row]:
    terraform = terraform_path()
    if terraform is None:
        return case.skipped("terraform is not on PATH")
    project = cached_project(ctx, CACHED_TASKS)
    module = TerraformProject.create(ctx.root, "tf-noop", CACHED_TASKS, terraform)
    run_checked(module.apply())  # create the resources once; the measured applies change nothing
    rig = Command("rig apply (plain)", [project.invocation("apply", plain=True)])
    baseline = Command("terraform apply", [module.apply()])
    return [ctx.compare(case, rig, baseline)]


def run_plan_noop(ctx: Context, case: Case) -> list[Row]:
    project = cached_project(ctx, CACHED_TASKS)
    rig = Command("rig plan (plain)", [project.invocation("plan", plain=True)])
    return [ctx.compare(case, rig, ctx.python_pass())]


def run_version(ctx: Context, case: Case) -> list[Row]:
    # No -C: the bare command a user or script types, which needs no project.
    rig = Command("rig --version", [Invocation([*rig_argv(), "--version"], ctx.root, base_env())])
    return [ctx.compare(case, rig, ctx.python_pass())]


def run_plan_scale(ctx: Context, case: Case) -> list[Row]:
    large, small = ctx.size(20_000, 2_000), ctx.size(2_000, 200)
    big, little = cached_project(ctx, large), cached_project(ctx, small)
    rig = Command(f"rig --json plan ({large})", [big.invocation("--json", "plan")])
    baseline = Command(f"rig --json plan ({small})", [little.invocation("--json", "plan")])
    title = f"no-op `rig plan`, {large:,} vs {small:,} cached tasks"
    return [ctx.compare(case, rig, baseline, title=title, baseline_title=f"the same with {small:,}")]


def run_plan_human(ctx: Context, case: Case) -> list[Row]:
    tasks = ctx.size(20_000, 2_000)
    project = cached_project(ctx, tasks)
    rig = Command("rig plan (plain)", [project.invocation("plan", plain=True)])
    baseline = Command("rig --json plan", [project.invocation("--json", "plan")])
    return [ctx.compare(case, rig, baseline, title=f"human `rig plan` of {tasks:,} nodes, piped")]


def run_apply_create(ctx: Context, case: Case) -> list[Row]:
    terraform = terraform_path()
    if terraform is None:
        return case.skipped("terraform is not on PATH")
    project = Project.create(ctx.root, "fresh-200", chain_config(CACHED_TASKS))
    module = TerraformProject.create(ctx.root, "tf-create", CACHED_TASKS, terraform)
    # Each run starts from no state at all, so every task / resource is created.
    rig = Command("rig apply (plain)", [project.invocation("apply", plain=True)], before=project.reset_state)
    baseline = Command("terraform apply", [module.apply()], before=module.reset_state)
    return [ctx.compare(case, rig, baseline)]


def run_parallel(ctx: Context, case: Case) -> list[Row]:
    four = Project.create(ctx.root, "parallel-4", parallel_config(4, 0.5))
    one = Project.create(ctx.root, "parallel-1", parallel_config(1, 0.5))
    rig = Command("rig apply, 4 branches", [four.invocation("apply", plain=True)])
    baseline = Command("rig apply, 1 branch", [one.invocation("apply", plain=True)])
    return [ctx.compare(case, rig, baseline)]


# -- pictures ----------------------------------------------------------------------------------
def run_graph(ctx: Context, case: Case) -> list[Row]:
    tasks = ctx.size(2_000, 200)
    project = cached_project(ctx, tasks)
    rig = Command("rig graph (piped)", [project.invocation("graph", plain=True)])
    baseline = Command("rig --json plan", [project.invocation("--json", "plan")])
    return [ctx.compare(case, rig, baseline, title=f"`rig graph` of {tasks:,} nodes, piped")]


# -- end of pictures ---------------------------------------------------------------------------

CLI_CASES = [
    Case(
        "apply-noop",
        f"no-op `rig apply`, {CACHED_TASKS} cached tasks",
        f"no-op `terraform apply` on {CACHED_TASKS} `terraform_data`",
        Target(max_ratio=0.5),
        run_apply_noop,
    ),
    Case(
        "plan-noop",
        f"no-op `rig plan`, {CACHED_TASKS} cached tasks",
        "`python -c pass`",
        Target(max_ratio=6),
        run_plan_noop,
    ),
    Case("version", "`rig --version`", "`python -c pass`", Target(max_ratio=2), run_version),
    Case(
        "plan-scale",
        "no-op `rig plan`, 20,000 vs 2,000 cached tasks",
        "the same with 2,000",
        Target(max_ratio=10),
        run_plan_scale,
    ),
    Case(
        "plan-human",
        "human `rig plan` of 20,000 nodes, piped",
        "the same with `--json`",
        Target(max_ratio=2),
        run_plan_human,
    ),
    Case(
        "apply-create",
        f"`rig apply`, {CACHED_TASKS} pending trivial tasks",
        f"`terraform apply` creating {CACHED_TASKS} `terraform_data`",
        Target(max_ratio=0.5),
        run_apply_create,
    ),
    Case("parallel", "4 parallel branches of a 0.5 s task", "one 0.5 s task", Target(max_ratio=1.3), run_parallel),
    Case("graph", "`rig graph` of 2,000 nodes, piped", "`rig --json plan` of it", Target(max_ratio=2), run_graph),
]

__all__ = ["CLI_CASES", "cached_project"]
