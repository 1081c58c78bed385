"""The handler-fingerprint matrix, end to end: edit a real project, re-load it, read the plan."""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rigcli import create_engine

BASE_CONFIG = """
from rigcli import sequence
import helpers

LABEL = "one"

def other_helper():
    return "unrelated"

def local_helper(value):
    return value + "-local"

def prepare(step):
    return {"ctx": {"label": local_helper(LABEL), "shared": helpers.shared("x")}}

workflows = sequence("matrix").task("prepare", prepare)
"""

HELPERS = """
def shared(value):
    return value + "-shared"

def unrelated():
    return 1
"""


def write(project: Path, config: str, helpers: str = HELPERS) -> None:
    (project / "rig_config.py").write_text(textwrap.dedent(config))
    (project / "helpers.py").write_text(textwrap.dedent(helpers))


T = TypeVar("T")


def with_engine(project: Path, use: Callable[[Any], Awaitable[T]]) -> T:
    """Load a fresh engine on ``project`` (a new rig process, as far as the cache can tell), await
    ``use(engine)`` and close the engine."""

    async def run() -> T:
        engine = create_engine(project)
        try:
            await engine.load()
            return await use(engine)
        finally:
            engine.close()

    return asyncio.run(run())


def apply(project: Path) -> None:
    with_engine(project, lambda engine: engine.planner.apply())


def plan(project: Path) -> list[tuple[str, str, str]]:
    async def rows(engine: Any) -> list[tuple[str, str, str]]:
        result = await engine.planner.plan()
        return [(node.path, node.status, node.reason.code) for node in result.nodes]

    return with_engine(project, rows)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write(root, BASE_CONFIG)
    apply(root)
    assert plan(root) == [("prepare", "cached", "cached")]
    return root


def test_reformatting_and_commenting_a_handler_keeps_the_cache(project: Path) -> None:
    reformatted = BASE_CONFIG.replace(
        '    return {"ctx": {"label": local_helper(LABEL), "shared": helpers.shared("x")}}',
        "    # build the label from the constant\n"
        '    return {\n        "ctx": {\n            "label": local_helper( LABEL ),\n'
        '            "shared": helpers.shared("x"),  # from the helper module\n        }\n    }',
    )
    assert reformatted != BASE_CONFIG
    write(project, reformatted)
    assert plan(project) == [("prepare", "cached", "cached")]


def test_changing_a_helper_in_the_same_module_busts_the_cache(project: Path) -> None:
    write(project, BASE_CONFIG.replace('value + "-local"', 'value + "-LOCAL"'))
    assert plan(project) == [("prepare", "pending", "task-changed")]


def test_changing_a_helper_in_another_project_module_busts_the_cache(project: Path) -> None:
    write(project, BASE_CONFIG, HELPERS.replace('value + "-shared"', 'value + "-changed"'))
    assert plan(project) == [("prepare", "pending", "task-changed")]


def test_changing_unrelated_code_keeps_the_cache(project: Path) -> None:
    write(
        project,
        BASE_CONFIG.replace('return "unrelated"', 'return "still unrelated"'),
        HELPERS.replace("return 1", "return 2"),
    )
    assert plan(project) == [("prepare", "cached", "cached")]


def test_changing_a_module_constant_the_handler_reads_busts_the_cache(project: Path) -> None:
    write(project, BASE_CONFIG.replace('LABEL = "one"', 'LABEL = "two"'))
    assert plan(project) == [("prepare", "pending", "task-changed")]


def test_moving_the_project_directory_keeps_the_cache(project: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "renamed"
    shutil.copytree(project, moved)
    shutil.rmtree(project)
    assert plan(moved) == [("prepare", "cached", "cached")]


def test_version_busts_the_cache_on_purpose(project: Path) -> None:
    write(project, BASE_CONFIG.replace('.task("prepare", prepare)', '.task("prepare", prepare, version="2")'))
    assert plan(project) == [("prepare", "pending", "task-changed")]


FACTORY_CONFIG = """
from rigcli import sequence

def make(value, suffix="a"):
    def handler(step):
        return {{"ctx": {{**step.ctx, value: suffix}}}}
    return handler

workflows = sequence("factory").task("first", make({first!r})).task("second", make("same", suffix={suffix!r}))
"""


def test_closure_values_and_defaults_are_part_of_the_key(tmp_path: Path) -> None:
    project = tmp_path / "factory"
    project.mkdir()
    write(project, FACTORY_CONFIG.format(first="one", suffix="a"))
    apply(project)
    assert plan(project) == [("first", "cached", "cached"), ("second", "cached", "cached")]

    async def keys(engine: Any) -> dict[str, str]:
        return {run.node_path: run.node_key for run in engine.project.node_runs()}

    first_keys = with_engine(project, keys)
    assert first_keys["first"] != first_keys["second"]

    write(project, FACTORY_CONFIG.format(first="two", suffix="a"))
    assert plan(project)[0] == ("first", "pending", "task-changed")
    write(project, FACTORY_CONFIG.format(first="one", suffix="b"))
    assert plan(project) == [("first", "cached", "cached"), ("second", "pending", "task-changed")]


PROVIDER_CONFIG = """
from rigcli import define_provider, env, sequence

class Plugin:
    provider_id = "fake"

    def create_provider(self, setup):
        return Controller()

class Controller:
    provider_id = "fake"

    def runtime(self, context):
        return {"ready": True}

fake = define_provider("fake", token=env("FAKE_TOKEN"), plugin=Plugin())

with_provider = sequence("with-provider").add_provider("fake", fake).task("uses", lambda step, fake: None)
without_provider = sequence("without-provider").task("plain", lambda step: None)

workflows = (
    sequence("scoped")
    .task("before", lambda step: None)
    .parallel(a=with_provider, b=without_provider)
    .add_provider("fake", fake)
    .task("after", lambda step, fake: None)
)
"""


def test_provider_config_busts_only_tasks_with_that_provider_in_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "scoped"
    project.mkdir()
    write(project, PROVIDER_CONFIG)
    monkeypatch.setenv("FAKE_TOKEN", "one")
    apply(project)
    assert [status for _, status, _ in plan(project)] == ["cached"] * 4

    monkeypatch.setenv("FAKE_TOKEN", "two")
    assert plan(project) == [
        ("before", "cached", "cached"),
        ("a.with-provider.uses", "pending", "provider-changed"),
        ("b.without-provider.plain", "cached", "cached"),
        ("after", "pending", "upstream-pending"),
    ]


def test_a_same_named_module_imported_elsewhere_is_not_served_to_the_project(tmp_path: Path) -> None:
    import importlib
    import sys

    other = tmp_path / "other"
    other.mkdir()
    (other / "helpers.py").write_text("def shared(value):\n    return 'from elsewhere'\n")
    sys.path.insert(0, str(other))
    try:
        sys.modules.pop("helpers", None)
        assert importlib.import_module("helpers").shared("x") == "from elsewhere"
        project = tmp_path / "project"
        project.mkdir()
        write(project, BASE_CONFIG)

        async def context(engine: Any) -> object:
            return (await engine.planner.apply()).context

        assert with_engine(project, context) == {"label": "one-local", "shared": "x-shared"}
    finally:
        sys.path.remove(str(other))
        sys.modules.pop("helpers", None)
