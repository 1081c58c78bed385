"""Through the installed `rig`: `rig graph` draws the plan the last full `rig plan` or `rig graph`
kept, without loading the config, exactly as the full way draws it, in every format; and plans
again when an input of that plan changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.cli_support import Result, run_rig, write_project
from tests.cli.test_cli_graph import NESTED_CONFIG, PATHS
from tests.helpers import imported_by_rig

# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
COUNTED_CONFIG = (
    NESTED_CONFIG
    + """
from pathlib import Path as _Path

with open(_Path(__file__).with_name("loads.txt"), "a") as _loads:
    _loads.write("loaded\\n")
"""
)

FORMATS = [("graph",), ("graph", "--format", "dot"), ("graph", "--format", "mermaid"), ("--json", "graph")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The nested project with its first task run, so the graph holds both verdicts."""
    project = write_project(tmp_path / "nested", COUNTED_CONFIG)
    rig(project, "apply", "--only", "base.first")
    return project


def rig(project: Path, *args: str, **env: str) -> Result:
    result = run_rig(*args, cwd=project, env={"NO_COLOR": "1", **env}, subprocess=True)
    assert result.returncode == 0, result
    assert "Traceback" not in result.stderr, result
    return result


def answer(project: Path, *args: str, **env: str) -> tuple[Result, bool]:
    """``rig ARGS`` and whether it loaded the config."""
    loads = project / "loads.txt"
    before = loads.read_text().count("loaded") if loads.exists() else 0
    result = rig(project, *args, **env)
    return result, loads.read_text().count("loaded") > before


def forget_memo() -> None:
    for path in (Path(os.environ["RIG_HOME"]) / "cache" / "answers").glob("*.marshal"):
        path.unlink()


@pytest.mark.parametrize("args", FORMATS, ids=["tree", "dot", "mermaid", "json"])
def test_a_second_graph_draws_what_the_full_way_drew_without_loading_the_config(
    project: Path, args: tuple[str, ...]
) -> None:
    forget_memo()
    full, loaded = answer(project, *args)
    assert loaded
    lean, loaded = answer(project, *args)
    assert not loaded, "the second rig graph loaded the config"
    assert (lean.stdout, lean.stderr) == (full.stdout, full.stderr)
    for path in PATHS:  # every task of every group is drawn
        assert path.rsplit(".", 1)[-1] in lean.stdout


def test_graph_draws_the_plan_that_rig_plan_kept_and_plan_answers_from_what_graph_kept(project: Path) -> None:
    forget_memo()
    _, loaded = answer(project, "plan")
    assert loaded
    graph, loaded = answer(project, "--json", "graph")
    assert not loaded, "rig graph loaded the config after a full rig plan"
    assert [node["path"] for node in graph.json["nodes"]] == PATHS
    assert graph.json["nodes"][0]["status"] == "cached"
    forget_memo()
    _, loaded = answer(project, "graph")
    assert loaded
    _, loaded = answer(project, "plan")
    assert not loaded, "rig plan loaded the config after a full rig graph"


def test_an_apply_or_an_edited_config_makes_graph_plan_again(project: Path) -> None:
    rig(project, "graph")
    rig(project, "apply")
    after_apply, loaded = answer(project, "--json", "graph")
    assert loaded, "rig graph drew the plan from before the apply"
    assert {node["status"] for node in after_apply.json["nodes"]} == {"cached"}
    config = project / "rig_config.py"
    config.write_text(config.read_text().replace('.task("join", noop)', '.task("join", noop).task("last", noop)'))
    edited, loaded = answer(project, "--json", "graph")
    assert loaded, "rig graph drew the plan of the config before its edit"
    assert [node["path"] for node in edited.json["nodes"]] == [*PATHS, "last"]
    assert edited.json["nodes"][-1]["status"] == "pending"


def test_rigs_own_render_switch_is_not_an_input_of_the_plan_but_another_variable_is(project: Path) -> None:
    forget_memo()
    _, loaded = answer(project, "--json", "plan")
    assert loaded
    _, loaded = answer(project, "graph", RIG_RENDER="0")
    assert not loaded, "RIG_RENDER=0 made rig graph plan again"
    _, loaded = answer(project, "graph", RIG_TEST_ANY_OTHER="1")
    assert loaded, "a variable the config may read did not make rig graph plan again"


def test_a_kept_plan_is_drawn_without_the_engine_records_or_typing(project: Path) -> None:
    rig(project, "graph", PYTHONPROFILEIMPORTTIME="1")  # the full way, which keeps it (this environment)
    rig(project, "graph", PYTHONPROFILEIMPORTTIME="1")  # the first lean one indexes the installed plugins
    lean, loaded = answer(project, "graph", PYTHONPROFILEIMPORTTIME="1")
    assert not loaded
    imported = imported_by_rig(lean.stderr)
    assert "rigcli.render.drawing" in imported
    # The session a command's body is given costs nothing until it loads the engine: none of its
    # machinery (signal watcher, child guard, output relay, host) is imported for a remembered plan.
    heavy = {"typing", "dataclasses", "json", "threading", "rigcli.records", "rigcli.engine"}
    heavy |= {"rigcli.cli.interrupts", "rigcli.children", "rigcli.streams", "rigcli.host", "rigcli.cli.terminal_host"}
    assert not imported & heavy, imported & heavy
