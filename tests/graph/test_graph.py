"""compile_workflow on its own: plan order, display and cache paths, scopes, config stacks, fragments."""

from __future__ import annotations

import pytest

from rigcli import define_provider, sequence
from rigcli.authoring.nodes import SequenceNode
from rigcli.errors import ConfigError
from rigcli.graph import LOCAL_STORE, CompiledWorkflow, FragmentSpec, ParallelSpec, TaskSpec, compile_workflow


def _noop(step: object) -> None:
    return None


def _compile(root: SequenceNode, providers: dict[str, object] | None = None) -> CompiledWorkflow:
    hashed: list[FragmentSpec] = []

    def hasher(fragment: FragmentSpec) -> str:
        hashed.append(fragment)
        return f"frag{len(hashed)}"

    return compile_workflow(root, providers or {}, hasher)  # type: ignore[arg-type]


def test_seed_one_paths_in_plan_order() -> None:
    base = sequence("base").task("first", _noop)
    left = sequence("left").task("second", _noop)
    right = sequence("right").task("data", _noop)
    root = sequence("root").add(base).parallel(left=left, right=right).task("join", _noop)

    compiled = _compile(root)

    assert [task.path for task in compiled.tasks] == ["base.first", "left.second", "right.data", "join"]
    assert [task.index for task in compiled.tasks] == [0, 1, 2, 3]
    assert isinstance(compiled.steps[1], ParallelSpec)
    assert [key for key, _ in compiled.steps[1].branches] == ["left", "right"]


def test_a_branch_named_like_its_task_or_sequence_is_not_repeated() -> None:
    root = sequence("root").parallel(
        fetch=sequence("fetch").task("clone", _noop), other=sequence("inner").task("t", _noop)
    )
    assert [task.path for task in _compile(root).tasks] == ["fetch.clone", "other.inner.t"]


def test_configure_stacks_root_first_and_merges_for_the_task() -> None:
    inner = sequence("inner").configure(region="eu", size="small").task("t", _noop)
    root = sequence("root").configure(region="us", team="core").add(inner)

    (task,) = _compile(root).tasks

    assert task.config_stack == ({"region": "us", "team": "core"}, {"region": "eu", "size": "small"})
    assert dict(task.config) == {"region": "eu", "team": "core", "size": "small"}


def test_provider_scope_follows_add_and_remove_provider() -> None:
    box = define_provider("local")
    cloud = define_provider("docker", image="x")
    root = (
        sequence("root")
        .task("before", _noop)
        .add_provider("cloud", cloud)
        .task("with_cloud", lambda step, cloud: None)
        .remove_provider("box")
        .task("after", _noop)
    )

    before, with_cloud, after = _compile(root, {"box": box}).tasks

    assert dict(before.providers) == {"box": box}
    assert dict(with_cloud.providers) == {"box": box, "cloud": cloud}
    assert dict(after.providers) == {"cloud": cloud}


def test_a_global_fragment_restarts_its_cache_paths_and_is_stored_by_its_hash() -> None:
    shared = sequence("toolchain").task("install", _noop).global_()
    root = sequence("root").add(sequence("outer").add(shared)).task("after", _noop)

    compiled = _compile(root)
    install, after = compiled.tasks

    assert (install.path, install.cache_path, install.store) == (
        "outer.toolchain.install",
        "toolchain.install",
        "frag1",
    )
    assert (after.path, after.cache_path, after.store) == ("after", "after", LOCAL_STORE)
    assert list(compiled.fragments) == ["frag1"]
    assert compiled.fragments["frag1"].node is shared


def test_a_handler_asking_for_an_unknown_name_fails_at_compile_time_listing_what_is_there() -> None:
    root = sequence("root").task("t", lambda step, nope: None)
    with pytest.raises(ConfigError, match="nope") as caught:
        _compile(root)
    assert "step" in str(caught.value)


def test_workspace_hooks_and_operations_get_their_scopes() -> None:
    box = define_provider("local")
    root = (
        sequence("root")
        .task("t", _noop)
        .workspace(create=lambda workflow, box: {}, remove=lambda workspace: None)
        .workspace_operation("shell", run=lambda workspace, box: None)
        .operation("report", run=lambda workflow: None)
    )

    compiled = _compile(root, {"box": box})

    assert compiled.creates_workspace
    assert compiled.create_hook is not None and dict(compiled.create_hook.providers) == {"box": box}
    assert compiled.remove_hook is not None
    assert list(compiled.workspace_operations) == ["shell"] and list(compiled.operations) == ["report"]
    assert len(compiled.all_scopes()) == 1 + 2 + 2  # the task, both hooks, both operations


def test_task_specs_are_values_of_their_position() -> None:
    root = sequence("root").task("a", _noop).task("b", _noop)
    first, second = _compile(root).tasks
    assert isinstance(first, TaskSpec) and (first.name, second.name) == ("a", "b")
    assert first.node is not second.node
