"""The swarm provider on the two-node cluster: machines are services of one replica, reached through their own node."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest
from provider_helpers import Harness
from swarm_cluster import API, SwarmCluster

from rigcli.engine.effects import StoreEffects
from rigcli.errors import ProviderError
from rigcli.provider_kit import MachineFileNotFoundError
from rigcli.state import create_state_store
from tests.helpers import wait_for

WORKER, MANAGER = "node.role==worker", "node.role==manager"


@pytest.fixture
def journaled(project: Path) -> Iterator[Callable[[Harness], tuple[Any, Any, Any]]]:
    """``journaled(harness)``: (store, controller, runtime), the harness's provider on a real effects journal."""
    opened: list[tuple[Any, Any]] = []

    def wire(harness: Harness) -> tuple[Any, Any, Any]:
        store = create_state_store(project_dir=project)
        store.sync_schema()
        controller = harness.plugin.create_provider(replace(harness.setup, effects=StoreEffects(store, "swarm")))
        effects = StoreEffects(store, "swarm", ("run", "r1"))
        opened.append((store, controller))
        return store, controller, controller.runtime(replace(harness.context, effects=effects))

    yield wire
    for store, controller in opened:
        controller.close()
        store.close()


def service(swarm: SwarmCluster, name: str) -> dict[str, Any]:
    found: dict[str, Any] = swarm.api.get(f"{API}/services/{name}").json()
    return found


def hostname_of(swarm: SwarmCluster, role: str) -> str:
    return next(name for name, found in swarm.node_roles().items() if found == role)


def test_a_machine_is_a_service_of_one_replica_whose_task_runs_on_a_node_that_fits(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any, project: Path
) -> None:
    resources = {"reservations": {"cpus": "0.01", "memory": "4M"}, "limits": {"memory": "64M", "pids": 200}}
    box = swarm_on(constraints=[WORKER], resources=resources, workspace="dev")
    store, _, runtime = journaled(box)
    machine = runtime.create_machine()
    worker = hostname_of(swarm, "worker")
    assert machine.node == worker

    spec = service(swarm, machine.id)["Spec"]
    assert spec["Name"] == machine.id
    assert spec["Mode"] == {"Replicated": {"Replicas": 1}}
    assert spec["EndpointSpec"]["Mode"] == "dnsrr"
    assert spec["TaskTemplate"]["Placement"]["Constraints"] == [WORKER]
    assert spec["TaskTemplate"]["Resources"] == {
        "Reservations": {"NanoCPUs": 10_000_000, "MemoryBytes": 4 << 20},
        "Limits": {"MemoryBytes": 64 << 20, "Pids": 200},
    }
    container_spec = spec["TaskTemplate"]["ContainerSpec"]
    assert container_spec["Image"] == swarm.image  # as given: never resolved to a digest through a registry
    expected = {"rig.project": str(project), "rig.machine": machine.id, "rig.effect": machine.id, "rig.kind": "machine"}
    assert spec["Labels"] == {**expected, "rig.workspace": "dev"} == container_spec["Labels"]
    [created] = box.of_type("machine.created")
    assert (created["machine"], created["node"], created["effect_id"]) == (machine.id, worker, machine.id)

    # The journal knew the service before it existed (by the name it carries), and knows its id now.
    [effect] = [e for e in store.list_effects() if e.id == machine.id]
    assert (effect.kind, effect.status, effect.owner_id) == ("service", "confirmed", "r1")
    assert effect.resource["service_id"] == machine.service_id

    # Commands and files go to the worker's own daemon: its container exists only there.
    assert swarm.api.get(f"{API}/containers/{machine.container_id}/json").status_code == 404
    worker_api = swarm.node_api(worker)
    assert worker_api.get(f"{API}/containers/{machine.container_id}/json").status_code == 200
    result = machine.exec("pwd && echo $GREETING", env={"GREETING": "hi"})
    assert result.stdout == "/workspace\nhi\n"
    machine.write_text("notes/a.txt", "written through the archive API\n")
    assert machine.read_text("/workspace/notes/a.txt") == "written through the archive API\n"
    assert machine.exists("notes/a.txt") and not machine.exists("notes/b.txt")
    with pytest.raises(MachineFileNotFoundError):
        machine.read_text("notes/b.txt")
    assert machine.exec("exit 3", check=False).exit_code == 3

    again = runtime.from_id(machine.id)
    assert (again.container_id, again.node) == (machine.container_id, worker)
    machine.delete()
    assert swarm.api.get(f"{API}/services/{machine.id}").status_code == 404
    assert [e.status for e in store.list_effects() if e.id == machine.id] in ([], ["deleted"])
    with pytest.raises(ProviderError, match="Unknown swarm machine"):
        runtime.from_id(machine.id)


def registry_labels(swarm: SwarmCluster, tag: str) -> dict[str, str]:
    accept = {"Accept": "application/vnd.docker.distribution.manifest.v2+json"}
    base = f"http://{swarm.registry}/v2/rig/snapshot"
    manifest = httpx.get(f"{base}/manifests/{tag}", headers=accept, timeout=10).json()
    config = httpx.get(f"{base}/blobs/{manifest['config']['digest']}", timeout=10).json()
    labels: dict[str, str] = config["config"]["Labels"]
    return labels


def test_a_snapshot_committed_on_the_worker_is_pushed_and_runs_on_the_manager(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any, project: Path
) -> None:
    store, _, on_worker = journaled(swarm_on(constraints=[WORKER]))
    _, _, on_manager = journaled(swarm_on(constraints=[MANAGER]))
    built = on_worker.create_machine()
    built.exec("echo built on $(hostname) > /workspace/marker", name="mark")
    ref = built.snapshot_ref()

    tag = ref["snapshot_id"]
    assert (ref["provider"], ref["kind"]) == ("swarm", "image")
    assert ref["image"] == f"{swarm.registry}/rig/snapshot@{ref['digest']}"
    assert tag in swarm.registry_tags("rig/snapshot")
    labels = registry_labels(swarm, tag)
    assert (labels["rig.project"], labels["rig.effect"], labels["rig.kind"]) == (str(project), tag, "snapshot")
    [effect] = [e for e in store.list_effects() if e.kind == "image"]
    assert (effect.id, effect.status, effect.resource["digest"]) == (tag, "confirmed", ref["digest"])
    assert on_worker.controller.validate_artifact(ref) is True

    forked = on_manager.from_snapshot(ref)
    manager = hostname_of(swarm, "manager")
    assert forked.node == manager and built.node != manager
    assert forked.read_text("marker").startswith("built on ")
    spec = service(swarm, forked.id)["Spec"]["TaskTemplate"]["ContainerSpec"]
    assert spec["Image"] == ref["image"]  # pinned by digest, in the registry: the manager's node pulled it from there
    assert (spec["Labels"]["rig.effect"], spec["Labels"]["rig.kind"]) == (forked.id, "machine")

    forked.delete()
    built.delete()
    assert on_worker.delete_snapshot(ref) is True
    assert tag not in swarm.registry_tags("rig/snapshot")
    assert on_worker.controller.validate_artifact(ref) is False
    assert on_worker.delete_snapshot(ref) is False  # already gone: fine, and nothing to say
    assert [e.status for e in store.list_effects() if e.id == tag] in ([], ["deleted"])
    # The nodes' copies went with it (once their containers were gone).
    assert swarm.wait_gone(project) == []
    for hostname, images in swarm.node_images(project).items():
        assert images == [], f"{hostname} kept {images}"


def project_services(swarm: SwarmCluster, project: Path) -> list[str]:
    labels = json.dumps({"label": [f"rig.project={project}"]})
    return [s["Spec"]["Name"] for s in swarm.api.get(f"{API}/services", params={"filters": labels}).json()]


def test_a_machine_no_node_can_run_fails_with_the_schedulers_reason_and_leaves_nothing(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any, project: Path
) -> None:
    box = swarm_on(constraints=["node.labels.rig-test-absent==yes"], schedule_timeout=1)
    store, _, runtime = journaled(box)
    started = time.monotonic()
    with pytest.raises(ProviderError) as failed:
        runtime.create_machine()
    assert time.monotonic() - started < 15
    message = str(failed.value)
    assert "did not start: no node can run it" in message and "no suitable node" in message, message
    assert project_services(swarm, project) == []
    assert [e.status for e in store.list_effects()] in ([], ["deleted"])


def test_an_image_the_registry_lacks_is_rejected_on_the_node_with_what_to_push(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any, project: Path
) -> None:
    absent = f"{swarm.registry}/rig/absent:1"
    store, _, runtime = journaled(swarm_on(image=absent))
    with pytest.raises(ProviderError) as failed:
        runtime.create_machine()
    message = str(failed.value)
    assert "did not start" in message and f"docker push {absent}" in message, message
    assert project_services(swarm, project) == []
    # A snapshot that left the registry: rebuild it, rather than push it.
    gone = {"provider": "swarm", "kind": "image", "image": f"{swarm.registry}/rig/snapshot@sha256:{'0' * 64}"}
    with pytest.raises(ProviderError, match="run `rig apply` to rebuild it"):
        runtime.from_snapshot(gone)
    assert project_services(swarm, project) == []
    assert [e.status for e in store.list_effects()] in ([], ["deleted"], ["deleted", "deleted"])


def test_an_image_from_elsewhere_is_refused_before_anything_is_asked_of_the_cluster(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], project: Path
) -> None:
    box = swarm_on()
    with pytest.raises(ProviderError) as failed:
        box.runtime.create_machine(image="busybox:latest")
    assert f"not in the configured registry {swarm.registry}" in str(failed.value)
    assert f"docker tag busybox:latest {swarm.registry}/busybox:latest" in str(failed.value)
    with pytest.raises(ProviderError, match="not in the configured registry"):
        box.runtime.from_snapshot({"provider": "swarm", "kind": "image", "image": "elsewhere.example:5000/rig/x:1"})
    with pytest.raises(ProviderError, match="not in the configured registry"):
        swarm_on(image="docker.io/library/busybox:latest")
    assert project_services(swarm, project) == []


def _scale(swarm: SwarmCluster, name: str, replicas: int) -> None:
    """As `docker service scale`; scaling up forces a new task (with restart condition none, a slot whose
    task is still shutting down is otherwise left empty)."""
    current = service(swarm, name)
    spec = {**current["Spec"], "Mode": {"Replicated": {"Replicas": replicas}}}
    if replicas:
        template = spec["TaskTemplate"]
        spec["TaskTemplate"] = {**template, "ForceUpdate": template.get("ForceUpdate", 0) + 1}
    updated = swarm.api.post(
        f"{API}/services/{current['ID']}/update", params={"version": current["Version"]["Index"]}, json=spec
    )
    assert updated.status_code == 200, updated.text


def _found(runtime: Any, machine_id: str) -> Any:
    try:
        return runtime.from_id(machine_id)
    except ProviderError:
        return None


def test_a_machine_is_found_at_the_task_that_runs_it_now(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any
) -> None:
    _, _, runtime = journaled(swarm_on())
    machine = runtime.create_machine()
    _scale(swarm, machine.id, 0)
    wait_for(lambda: _found(runtime, machine.id) is None, "the orchestrator to shut the task down")
    with pytest.raises(ProviderError, match=f"Swarm machine {machine.id} is not running"):
        runtime.from_id(machine.id)
    _scale(swarm, machine.id, 1)  # a new task: a new container, maybe on the other node
    wait_for(lambda: _found(runtime, machine.id) is not None, "the service's new task to run")
    again = runtime.from_id(machine.id)
    assert again.container_id != machine.container_id
    assert again.exec("hostname").stdout == f"{again.container_id[:12]}\n"
    stored = runtime.controller.setup.storage.get(f"machine:{machine.id}")["value"]
    assert (stored["container_id"], stored["node"]) == (again.container_id, again.node)


def test_an_interactive_command_runs_in_the_tasks_container_through_its_own_node(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI runs interactive commands, and it is not on PATH")
    machine = swarm_on(constraints=[WORKER]).runtime.create_machine()
    spec = machine.attach("echo in $(hostname) at $(pwd); exit 7")
    assert spec.env["DOCKER_HOST"] == swarm.nodes[machine.node]  # the worker's own daemon, not the manager
    child = pexpect.spawn(spec.argv[0], list(spec.argv[1:]), env={**os.environ, **spec.env}, timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert f"in {machine.container_id[:12]} at /workspace" in child.before.decode()
    assert child.exitstatus == 7


def test_a_live_machine_is_snapshotted_as_it_is_in_place_of_the_snapshot_it_was_made_from(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any
) -> None:
    store, controller, on_worker = journaled(swarm_on(constraints=[WORKER]))
    _, _, on_manager = journaled(swarm_on(constraints=[MANAGER]))
    built = on_worker.create_machine()
    built.write_text("base.txt", "from the build\n")
    base = built.snapshot_ref()
    live = on_worker.from_snapshot(base)
    live.write_text("work.txt", "live edits\n")

    [machine_effect] = [e for e in store.list_effects() if e.id == live.id]
    assert machine_effect.kind in controller.machine_kinds  # what the kit hands to machine_source/snapshot_machine
    source = controller.machine_source(live.id)
    assert source is not None and source["image"] == base["image"]
    assert all(base[key] == value for key, value in source.items())  # it names the ref in the workflow context
    assert controller.machine_source(built.id) is None  # made from an image, not a snapshot

    shot = controller.snapshot_machine(live.id, StoreEffects(store, "swarm", ("workspace", "w-new")))
    assert (shot["provider"], shot["kind"]) == ("swarm", "image") and shot["image"] != base["image"]
    [journaled_shot] = [e for e in store.list_effects() if e.id == shot["snapshot_id"]]
    assert (journaled_shot.status, journaled_shot.owner_kind, journaled_shot.owner_id) == (
        "confirmed",
        "workspace",
        "w-new",
    )
    assert shot["snapshot_id"] in swarm.registry_tags("rig/snapshot")
    assert live.exec("cat work.txt").stdout == "live edits\n"  # the live machine runs on, unchanged

    forked = on_manager.from_snapshot(shot)
    assert forked.node == hostname_of(swarm, "manager") != live.node
    assert forked.exec("cat base.txt work.txt").stdout == "from the build\nlive edits\n"


def test_machines_made_at_once_from_one_controller_spread_over_both_nodes(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], journaled: Any
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    store, _, runtime = journaled(swarm_on())
    base = runtime.create_machine()
    ref = base.snapshot_ref()
    base.delete()
    with ThreadPoolExecutor(max_workers=6) as pool:  # as `rig fork --count 6` runs its creates
        machines = list(pool.map(lambda _: runtime.from_snapshot(ref), range(6)))

    assert len({machine.id for machine in machines}) == 6
    assert {machine.node for machine in machines} == set(swarm.nodes), [machine.node for machine in machines]
    for machine in machines:
        assert machine.exec("hostname").stdout == f"{machine.container_id[:12]}\n"
    confirmed = {e.id for e in store.list_effects() if e.kind == "service" and e.status == "confirmed"}
    assert confirmed >= {machine.id for machine in machines}
