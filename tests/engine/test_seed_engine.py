"""The reference engine suite, part 1: graphs, workspaces, operations, outputs and interactions.

Each test mirrors one test of the rigkit engine suite (seeds/000_…), same scenario, same
assertions, with Python names (DESIGN.md wins where the two differ).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from rigcli.errors import RigError
from tests.engine.configs import TERMINAL_CONFIG
from tests.engine.support import EngineProject, assert_matches, record_events, run_async
from tests.fakes import FakeWorkflowProvider, fresh_fake_provider

GRAPH_CONFIG = """
from pydantic import BaseModel

from rigcli import Arg, WorkspaceRef, define_provider, workflow

app = workflow("test", providers={"test": define_provider("test", {"token": "test-key"})})


def first(step, test):
    print("preparing base")
    vm = test.create_vm()
    vm.exec("touch /tmp/first", name="touch first")
    if not vm.exists("/tmp/first"):
        raise RuntimeError("first was not created")
    return {"ctx": {"first": True, "vm": vm.snapshot_ref()}}


base = app.sequence("base").task("first", first)


def second(step, test):
    if not step.ctx.get("first"):
        raise RuntimeError("missing first context")
    vm = test.from_snapshot(step.ctx["vm"])
    vm.exec("touch /tmp/second", name="touch second")
    return {"ctx": {"second": True, "vm": vm.snapshot_ref()}}


left = app.sequence("left").task("second", second)


async def data(step):
    if not step.ctx.get("first"):
        raise RuntimeError("missing first context")
    return {"ctx": {"data": "right-ready"}}


right = app.sequence("right").task("data", data)


async def join(step):
    if not step.ctx["left"]["second"]:
        raise RuntimeError("missing left context")
    if step.ctx["right"]["data"] != "right-ready":
        raise RuntimeError("missing right context")
    return {"ctx": {"vm": step.ctx["left"]["vm"], "summary": step.ctx["right"]["data"]}}


def create(providers, workflow, workspace, local):
    if workflow.ctx["summary"] != "right-ready":
        raise RuntimeError("missing final context")
    vm = providers.test.from_snapshot(workflow.ctx["vm"])
    vm.exec("touch /tmp/workspace-" + workspace.name, name="mark workspace")
    local.open("created://" + workspace.name)
    return {"summary": workflow.ctx["summary"], "repo_path": "/workspace/repo", "vm_id": vm.vm_id}


def remove(providers, workspace, workflow):
    if workflow.ctx["summary"] != "right-ready":
        raise RuntimeError("missing final context on remove")
    vm = providers.test.from_id(workspace.ctx["vm_id"])
    vm.exec("touch /tmp/remove-" + workspace.name, name="mark workspace remove")


def open_workspace(providers, workspace, workflow, local):
    if workflow.ctx["summary"] != "right-ready":
        raise RuntimeError("missing final context on open")
    if workspace.ctx["summary"] != "right-ready":
        raise RuntimeError("missing workspace context")
    vm = providers.test.from_id(workspace.ctx["vm_id"])
    vm.exec("touch /tmp/open-" + workspace.name, name="mark workspace open")
    local.open("open://" + workspace.name)


class MarkInput(BaseModel):
    workspace: WorkspaceRef = Arg(position=0)
    label: str = "marked"


def mark(input, providers, local):
    vm = providers.test.from_id(input.workspace.ctx["vm_id"])
    vm.exec("touch /tmp/mark-" + input.workspace.name, name="mark via operation")
    local.open("mark://" + input.workspace.name)
    return {
        "workspace": input.workspace.name,
        "label": input.label,
        "repo_path": input.workspace.ctx["repo_path"],
        "summary": input.workspace.ctx["summary"],
    }


workflows = (
    app.sequence("root")
    .add(base)
    .parallel(left=left, right=right)
    .task("join", join)
    .workspace(create=create, remove=remove)
    .workspace_operation("open", run=open_workspace)
    .operation("mark", run=mark, input=MarkInput)
)
"""


@run_async
async def test_plans_applies_graph_nodes_reuses_graph_cache_and_forks_workspaces(project: EngineProject) -> None:
    project.write_config(GRAPH_CONFIG)

    opened: list[str] = []
    provider = FakeWorkflowProvider()

    async def provider_factory(setup: Any) -> FakeWorkflowProvider:
        return provider

    engine = project.engine(provider_factory=provider_factory, local={"open": opened.append})
    events = record_events(engine)

    await engine.load()

    initial = await engine.planner.plan()
    assert initial.workflow == "test"
    assert initial.cached_node_count == 0
    assert initial.node_count == 4
    assert [node.path for node in initial.nodes] == ["base.first", "left.second", "right.data", "join"]

    applied = await engine.planner.apply()
    assert applied.context["vm"] == {"provider": "test", "kind": "vmSnapshot", "snapshot_id": "snap-2"}
    assert {
        "type": "log.output",
        "node_path": "base.first",
        "stream": "info",
        "data": "preparing base",
    } in events
    assert len(provider.snapshots) == 2
    assert len(engine.project.node_runs()) == 4

    cached = await engine.planner.plan()
    assert cached.cached_node_count == 4
    assert cached.final_context is not None
    assert cached.final_context["summary"] == "right-ready"

    workspace = await engine.workspaces.fork(name="work")
    assert workspace.name == "work"
    assert_matches(workspace.ctx, {"summary": "right-ready", "repo_path": "/workspace/repo", "vm_id": "vm-3"})
    assert len(engine.workspaces.list_workspaces()) == 1
    assert opened == ["created://work"]
    assert provider.has_file("vm-3", "/tmp/workspace-work") is True

    open_operation = next(
        (operation for operation in engine.operations.list_workspace_operations() if operation.id == "open"), None
    )
    assert open_operation is not None
    assert open_operation.id == "open"
    marked = await engine.operations.run_operation(operation="mark", input={"workspace": "work"})
    assert marked == {
        "workspace": "work",
        "label": "marked",
        "repo_path": "/workspace/repo",
        "summary": "right-ready",
    }
    assert opened == ["created://work", "mark://work"]
    assert provider.has_file("vm-3", "/tmp/mark-work") is True

    await engine.operations.run_workspace_operation("work", "open")
    assert opened == ["created://work", "mark://work", "open://work"]
    assert provider.has_file("vm-3", "/tmp/open-work") is True

    await engine.operations.run_workspace_operation("work", "remove")
    assert len(engine.workspaces.list_workspaces()) == 0
    assert provider.has_file("vm-3", "/tmp/remove-work") is True


CREATE_CONFIG = """
from pydantic import BaseModel

from rigcli import Arg, WorkspaceRef, define_config, define_provider, sequence

test = define_provider("test", {"token": "test-key"})


def prepare(providers):
    vm = providers.test.create_vm()
    vm.exec("touch /tmp/template", name="prepare template")
    return {"ctx": {"vm": vm.snapshot_ref(), "repo_path": "/workspace/repo"}}


def create(workflow, workspace, providers):
    vm = providers.test.from_snapshot(workflow.ctx["vm"])
    vm.exec("touch /tmp/create-" + workspace.name, name="create workspace")
    return {
        "name": workspace.name,
        "vm_id": vm.vm_id,
        "source_snapshot": workflow.ctx["vm"],
        "repo_path": workflow.ctx["repo_path"],
        "ready": True,
    }


async def remove():
    return None


class InspectInput(BaseModel):
    workspace: WorkspaceRef = Arg(position=0)


async def inspect(input, local):
    local.open("created://" + input.workspace.name)
    return {
        "vm_id": input.workspace.ctx["vm_id"],
        "repo_path": input.workspace.ctx["repo_path"],
        "ready": input.workspace.ctx["ready"],
    }


async def status(workspace):
    return {"workspace": workspace.name, "vm_id": workspace.ctx["vm_id"]}


root = (
    sequence("create-test")
    .step("prepare", prepare)
    .workspace(create=create, remove=remove)
    .operation("inspect", run=inspect, input=InspectInput)
    .workspace_operation("status", run=status)
)

workflows = define_config(providers={"test": test}, workflows=[root])
"""


@run_async
async def test_creates_workspaces_from_workspace_definitions_and_exposes_persisted_workspace_context(
    project: EngineProject,
) -> None:
    project.write_config(CREATE_CONFIG)

    opened: list[str] = []
    provider = FakeWorkflowProvider()
    engine = await project.loaded(provider_factory=lambda setup: provider, local={"open": opened.append})

    project_info = engine.project.info()
    assert project_info.workflow is not None
    assert project_info.workflow.creates_workspace is True
    assert [item.name for item in project_info.workflows] == ["create-test"]
    assert [operation.id for operation in engine.operations.list_operations()] == ["inspect"]

    workspace = await engine.workspaces.fork(name="created")
    assert workspace.name == "created"
    assert_matches(workspace.ctx, {"name": "created", "vm_id": "vm-2", "repo_path": "/workspace/repo", "ready": True})
    assert provider.has_file("vm-2", "/tmp/create-created") is True

    inspected = await engine.operations.run_operation(operation="inspect", input={"workspace": "created"})
    assert inspected == {"vm_id": "vm-2", "repo_path": "/workspace/repo", "ready": True}
    assert opened == ["created://created"]

    status = await engine.operations.run_workspace_operation("created", "status")
    assert status == {"workspace": "created", "vm_id": "vm-2"}


@run_async
async def test_rejects_workspace_names_that_are_not_shell_safe(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import define_config, sequence


        async def ready():
            return {"ctx": {"ready": True}}


        async def create(workspace):
            return {"name": workspace.name}


        async def remove():
            return None


        root = sequence("workspace-names").step("ready", ready).workspace(create=create, remove=remove)

        workflows = define_config(providers={}, workflows=[root])
        """
    )

    engine = await project.loaded()

    with pytest.raises(RigError, match="create requires a workspace name"):
        await engine.workspaces.fork(name="")
    for name in ["some workspace", "some/workspace", "-workspace"]:
        with pytest.raises(RigError, match="Workspace name"):
            await engine.workspaces.fork(name=name)
    assert engine.workspaces.list_workspaces() == []


@run_async
async def test_loads_multiple_workflows_from_define_config(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import define_config, sequence


        async def api_ready():
            return {"ctx": {"api": True}}


        async def web_ready():
            return {"ctx": {"web": True}}


        api = sequence("api").step("ready", api_ready)
        web = sequence("web").step("ready", web_ready)

        workflows = define_config(providers={}, workflows=[api, web])
        """
    )

    engine = await project.loaded(provider_factory=fresh_fake_provider)

    assert [item.name for item in engine.project.summaries()] == ["api", "web"]
    assert engine.project.info().workflow is None
    with pytest.raises(RigError, match="Multiple workflows are defined"):
        await engine.planner.plan()
    assert (await engine.planner.plan(workflow="api")).workflow == "api"


@run_async
async def test_rejects_task_outputs_that_are_not_json_serializable(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import define_provider, workflow

        app = workflow("test", providers={"test": define_provider("test", {"token": "test-key"})})


        async def returns_function():
            return {"ctx": {"fn": lambda: "nope"}}


        workflows = app.sequence("bad").task("returns-function", returns_function)
        """
    )

    engine = await project.loaded(provider_factory=fresh_fake_provider)
    with pytest.raises(RigError, match="must be JSON-serializable"):
        await engine.planner.apply()


@run_async
async def test_routes_terminal_interactions_through_provider_runtimes(project: EngineProject) -> None:
    project.write_config(TERMINAL_CONFIG)

    interactions: list[dict[str, Any]] = []

    async def present(request: dict[str, Any]) -> None:
        interactions.append(request)

    engine = await project.loaded(provider_factory=fresh_fake_provider, interaction={"present": present})
    applied = await engine.planner.apply()

    assert interactions == [
        {
            "node_path": "login",
            "id": "fake-terminal",
            "title": "GitHub auth",
            "url": "http://127.0.0.1/fake-terminal",
            "instructions": None,
        }
    ]
    assert applied.context["finished"] is True


@run_async
async def test_waits_for_provider_owned_interaction_completion_before_resuming_tasks(project: EngineProject) -> None:
    project.write_config(TERMINAL_CONFIG)

    completed: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    provider = FakeWorkflowProvider(terminal_completed=completed)
    presented = threading.Event()

    async def present(request: dict[str, Any]) -> None:
        presented.set()

    engine = await project.loaded(provider_factory=lambda setup: provider, interaction={"present": present})
    applying = asyncio.ensure_future(engine.planner.apply())

    # Wait until the interaction is on screen, then give the engine a little more time to
    # (wrongly) move on; the apply must still be waiting for ``completed``.
    for _ in range(1000):
        if presented.is_set() or applying.done():
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.025)
    assert not applying.done()
    assert provider.terminal_stopped == 0

    completed.set_result({"finished": True})
    applied = await applying

    assert applied.context["finished"] is True
    assert provider.terminal_stopped == 1
