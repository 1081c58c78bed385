"""The engine's parts through its protocol: one selection of the workflow, the bounded re-evaluation
after ``step.invalidate``, and the event loop the engine owns when called from synchronous code."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rigcli import create_engine
from rigcli.engine.planner import MAX_EVALUATIONS
from rigcli.errors import AmbiguousWorkflowError, InterruptedRunError, NotFoundError, TaskError, UsageError
from tests.engine.support import EngineProject, EnvCounters, run_async, write_config
from tests.helpers import wait_for

TWO_WORKFLOWS = """
from rigcli import sequence

api = sequence("api").task("a", lambda step: {"ctx": {"a": 1}})
web = sequence("web").task("w", lambda step: {"ctx": {"w": 1}})
workflows = [api, web]
"""


@run_async
async def test_several_workflows_and_none_named_is_ambiguous_before_anything_is_read_or_written(
    project: EngineProject,
) -> None:
    project.write_config(TWO_WORKFLOWS)
    engine = await project.loaded()
    calls = [
        engine.planner.plan(),
        engine.planner.apply(),
        engine.planner.apply(dry_run=True),
        engine.workspaces.fork("dev"),
        engine.cache.list_cache(),
        engine.cache.explain(),
        engine.cache.invalidate(all=True),
        engine.cache.clear_cache(),
    ]
    for call in calls:
        with pytest.raises(AmbiguousWorkflowError) as raised:
            await call
        assert raised.value.workflows == ["api", "web"]
        assert isinstance(raised.value, UsageError) and raised.value.exit_code == 2
        assert str(raised.value) == "Multiple workflows are defined; pass --workflow (available: api, web)"
    with pytest.raises(AmbiguousWorkflowError):
        engine.project.select()
    assert (
        engine.project.node_runs() == [] and engine.workspaces.list_workspaces() == []
    )  # nothing ran, nothing was made
    # Named, each is what it says; an unknown name is not ambiguous but unknown.
    assert engine.project.select("web").name == "web"
    assert (await engine.planner.apply(workflow="web")).context == {"w": 1}
    with pytest.raises(NotFoundError, match="Unknown workflow mobile"):
        await engine.planner.plan(workflow="mobile")


INVALIDATES = """
import os

from rigcli import sequence


def bump(name):
    os.environ[name] = str(int(os.environ[name]) + 1)


def auth():
    bump("RIG_PASS_AUTH")
    return {"ctx": {"token": os.environ["RIG_PASS_AUTH"]}}


def check(step):
    bump("RIG_PASS_CHECK")
    if int(os.environ["RIG_PASS_CHECK"]) <= int(os.environ["RIG_PASS_INVALIDATIONS"]):
        return step.invalidate("auth")
    return {"ctx": step.ctx}


workflows = sequence("loop").task("auth", auth).task("check", check, cache_ttl=0)
"""


def test_an_apply_evaluates_at_most_nine_times() -> None:
    assert MAX_EVALUATIONS == 9  # DESIGN §3: "stops after 9 attempts"


@pytest.mark.parametrize("invalidations", [1, MAX_EVALUATIONS - 1])
@run_async
async def test_each_invalidation_re_runs_its_target_and_the_pass_after_the_last_one_completes(
    invalidations: int, project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = EnvCounters(monkeypatch, auth="RIG_PASS_AUTH", check="RIG_PASS_CHECK")
    monkeypatch.setenv("RIG_PASS_INVALIDATIONS", str(invalidations))
    project.write_config(INVALIDATES)
    engine = await project.loaded()

    applied = await engine.planner.apply()

    passes = invalidations + 1
    assert counts() == {"auth": str(passes), "check": str(passes)}
    assert applied.context == {"token": str(passes)}
    live = sorted((run.node_path, run.invalidated) for run in engine.project.node_runs() if not run.invalidated)
    assert live == [("auth", False), ("check", False)]
    # Each invalidating run is recorded, and invalidated at once: never reused.
    invalidating = [run for run in engine.project.node_runs() if run.node_path == "check" and run.invalidated]
    assert len(invalidating) == invalidations
    assert {(run.status, run.output) for run in invalidating} == {("succeeded", None)}


@run_async
async def test_the_ninth_invalidation_stops_the_apply_with_an_error(
    project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = EnvCounters(monkeypatch, auth="RIG_PASS_AUTH", check="RIG_PASS_CHECK")
    monkeypatch.setenv("RIG_PASS_INVALIDATIONS", str(MAX_EVALUATIONS))
    project.write_config(INVALIDATES)
    engine = await project.loaded()

    with pytest.raises(TaskError) as raised:
        await engine.planner.apply()
    assert str(raised.value) == "Task check repeatedly invalidated auth; stopping after 9 attempts"
    assert counts() == {"auth": str(MAX_EVALUATIONS), "check": str(MAX_EVALUATIONS)}
    # The last target is invalidated too: the next apply starts from a fresh auth.
    assert [run.invalidated for run in engine.project.node_runs() if run.node_path == "auth"] == [
        True
    ] * MAX_EVALUATIONS


PARALLEL = """
import os
import time

from rigcli import sequence, task


def slow(step):
    time.sleep(0.2)
    return {"ctx": {"slow": True}}


def fast(step):
    return {"ctx": {"fast": True}}


left, right = sequence("left").task("slow", slow), sequence("right").task("fast", fast)
workflows = sequence("par").parallel(left=left, right=right)
"""


def test_a_synchronous_caller_runs_the_engine_on_the_engines_own_loop(tmp_path: Path) -> None:
    """No asyncio in the caller: ``Engine.run`` drives by hand, then hands over to the engine's loop."""
    write_config(tmp_path, PARALLEL)
    engine = create_engine(tmp_path)
    seen: list[bool] = []
    try:
        engine.run(engine.load(), on_loop=seen.append)
        assert seen == []  # loading needs no loop
        applied = engine.run(engine.planner.apply(), on_loop=seen.append)
        assert applied.context == {"left": {"slow": True}, "right": {"fast": True}}
        assert seen == [True, False]  # once, around the handlers; told when it is over
        plan = engine.run(engine.planner.plan(), on_loop=seen.append)
        assert plan.cached_node_count == 2 and seen == [True, False]  # a cached plan needs no loop
    finally:
        engine.close()


def test_a_cached_plan_through_engine_run_never_imports_asyncio(tmp_path: Path) -> None:
    write_config(tmp_path, PARALLEL)
    engine = create_engine(tmp_path)
    engine.run(engine.load())
    engine.run(engine.planner.apply())
    engine.close()
    code = (
        "import sys\n"
        "from rigcli import create_engine\n"
        f"engine = create_engine({str(tmp_path)!r})\n"
        "engine.run(engine.load())\n"
        "plan = engine.run(engine.planner.plan())\n"
        "engine.close()\n"
        "print(plan.cached_node_count, 'asyncio' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stdout.split() == ["2", "False"]


HANGS = """
from pathlib import Path
import time

from rigcli import sequence

HERE = Path(__file__).parent


def hang(step):
    (HERE / "started").touch()
    while not (HERE / "stop").exists():  # a Python handler cannot be killed; the test lets it go
        time.sleep(0.05)
    return None


workflows = sequence("hang").task("hang", hang, cache_ttl=0)
"""


def test_interrupt_from_another_thread_ends_the_running_apply_and_records_it_interrupted(tmp_path: Path) -> None:
    write_config(tmp_path, HANGS)
    engine = create_engine(tmp_path)
    try:
        engine.run(engine.load())
        threading.Thread(
            target=lambda: (wait_for((tmp_path / "started").exists, "the task to start"), engine.interrupt()),
            daemon=True,
        ).start()
        with pytest.raises(BaseException) as raised:
            engine.run(engine.planner.apply())
        assert isinstance(raised.value, InterruptedRunError) or type(raised.value).__name__ == "CancelledError"
        [run] = engine.project.node_runs()
        assert (run.node_path, run.status) == ("hang", "interrupted")
        assert engine.cancellation.is_set()
    finally:
        (tmp_path / "stop").touch()
        engine.close()
