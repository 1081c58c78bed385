"""Whatever ends a node run, the journal finishes it: no run of a live engine stays ``running``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rigcli import create_engine
from rigcli.errors import HandlerBaseException, RigError, TaskError
from rigcli.events import Event, NodeCompleted, NodeStarted

CONFIG = """
import sys
from rigcli import sequence


def leave(step):
    sys.exit(5)


def interrupt(step):
    raise KeyboardInterrupt


def generator_exit(step):
    raise GeneratorExit


workflows = sequence("journal").task("first", lambda step: {{"ctx": {{"n": 1}}}}).task("second", {handler})
"""


def _statuses(project: Path, handler: str, listener: object = None) -> tuple[BaseException, list[tuple[str, str]]]:
    (project / "rig_config.py").write_text(CONFIG.format(handler=handler))

    async def scenario() -> BaseException:
        engine = create_engine(project)
        await engine.load()
        if listener is not None:
            engine.on_event(listener)  # type: ignore[arg-type]
        try:
            await engine.planner.apply()
        except BaseException as exc:  # what escapes is the point of the test
            return exc
        finally:
            engine.close()
        pytest.fail("apply succeeded")

    error = asyncio.run(scenario())
    engine = create_engine(project)
    asyncio.run(engine.load())
    runs = sorted((run.node_path, run.status) for run in engine.project.node_runs())
    engine.close()
    return error, runs


def test_sys_exit_in_a_handler_fails_the_run_with_a_task_error(tmp_path: Path) -> None:
    error, runs = _statuses(tmp_path, "leave")
    assert isinstance(error, RigError) and str(error) == "Task second called sys.exit(5)"
    assert runs == [("first", "succeeded"), ("second", "failed")]


def test_keyboard_interrupt_in_a_handler_records_the_run_interrupted(tmp_path: Path) -> None:
    error, runs = _statuses(tmp_path, "interrupt")
    assert isinstance(error, KeyboardInterrupt)
    assert runs == [("first", "succeeded"), ("second", "interrupted")]


def test_any_other_base_exception_fails_the_run(tmp_path: Path) -> None:
    # A handler's failure like any other (one error line, exit 1), not something to re-raise.
    error, runs = _statuses(tmp_path, "generator_exit")
    assert isinstance(error, TaskError) and str(error) == (
        "Task second failed: GeneratorExit at rig_config.py:15 in generator_exit (the rest: rig logs second)"
    )
    assert isinstance(error.__cause__, HandlerBaseException)
    assert isinstance(error.__cause__.original, GeneratorExit)
    assert runs == [("first", "succeeded"), ("second", "failed")]


@pytest.mark.parametrize("kind", [NodeStarted, NodeCompleted])
def test_a_listener_that_raises_never_leaves_a_run_running(tmp_path: Path, kind: type[Event]) -> None:
    def listener(event: Event) -> None:
        if isinstance(event, kind) and event.node_path == "second":  # type: ignore[attr-defined]
            raise BrokenPipeError(32, "Broken pipe")

    error, runs = _statuses(tmp_path, "lambda step: None", listener)
    assert isinstance(error, (BrokenPipeError, RigError))
    assert ("second", "running") not in runs
