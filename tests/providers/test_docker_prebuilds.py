"""Prebuilds through the installed `rig`: one apply on daemon A, pushed to a real registry, and on daemon B
(another clone, another Docker host, the same PostgreSQL state) everything is cached, no handler runs,
and `rig fork` pulls the snapshot from that registry. A manifest deleted from the registry is
`artifact-invalid`; `rig gc` deletes only the manifests nothing refers to, and says in one line when
the registry refuses deletes; a registry that never answers leaves the runs cached, with a warning,
within the bound.

A is the unix-socket daemon (DOCKER_HOST), B the TLS one of ``.ci/docker-remote.sh``; the registry is a
private ``docker-registry`` on 127.0.0.1 that both reach (``registry_server``). Without it the tests skip;
RIG_REQUIRE_REGISTRY=1 (set by ``.ci/run``) turns that into a failure, as RIG_REQUIRE_DOCKER=1 does for
the second daemon and RIG_REQUIRE_POSTGRES=1 for PostgreSQL.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import registry_server
from docker_endpoints import EndpointDaemon

from tests.backends import rows
from tests.cli.cli_support import Result, run_rig_process, write_project
from tests.pg_server import PostgresServer, unique_schema
from tests.silent_peers import Relay

CONFIG = """
import os
from pathlib import Path

from rigcli import define_provider, env, workflow

if os.environ.get("RIG_TEST_LOADS"):  # how a test sees that rig's cache answered without the config
    with open(os.environ["RIG_TEST_LOADS"], "a") as loads:
        loads.write("loaded\\n")

box = define_provider("docker", image=env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"), registry=env("RIG_REGISTRY"))
app = workflow("team", providers={"box": box})


def _ran(name):  # one line per handler run, whichever clone ran it: the counter the tests read
    with open(os.environ["RIG_TEST_COUNTER"], "a") as counter:
        counter.write(name + "\\n")


def base(step, box):
    _ran("base")
    machine = box.create_machine()
    try:
        machine.exec("echo base > /base.txt")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def tools(step, box):
    _ran("tools")
    machine = box.from_snapshot(step.ctx["base"])
    try:
        machine.exec("echo tools " + os.environ.get("RIG_TOOLS_VERSION", "1") + " > /tools.txt")
        return {"ctx": {**step.ctx, "tools": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["tools"])
    return {"machine": machine.id, "container": machine.container_id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = (
    app.sequence("setup")
    .task("base", base)
    .task("tools", tools, version=os.environ.get("RIG_TOOLS_VERSION", "1"))
    .workspace(create=create, remove=remove)
)
"""


@dataclass
class Team:
    """Two clones of one project, each on its own daemon, one state and one registry between them."""

    root: Path
    registry: registry_server.Registry
    state: str  # the state's URL (PostgreSQL) or path
    a: EndpointDaemon
    b: EndpointDaemon
    counter: Path
    one_clone: bool = False  # both daemons used from one clone (its SQLite state)

    def clone(self, name: str) -> Path:
        directory = self.root / ("a" if self.one_clone else name)
        if not (directory / "rig_config.py").exists():
            write_project(directory, CONFIG)
        return directory

    def env(self, daemon: EndpointDaemon, **more: str) -> dict[str, str]:
        env = {key: value or "" for key, value in daemon.env.items()}
        env.update(
            RIG_STATE_URL=self.state,  # empty: the clone's own SQLite file
            RIG_REGISTRY=self.registry.name,
            RIG_TEST_COUNTER=str(self.counter),
            RIG_TEST_DOCKER_IMAGE=daemon.image,
            RIG_RENDER="0",
        )
        env.update(more)
        return env

    def rig(self, on: str, *args: str, **env: str) -> Result:
        daemon = self.a if on == "a" else self.b
        return run_rig_process(*args, cwd=self.clone(on), env=self.env(daemon, **env), timeout=180)

    def ok(self, on: str, *args: str, **env: str) -> Result:
        result = self.rig(on, *args, **env)
        assert result.returncode == 0, result
        return result

    def ran(self) -> list[str]:
        return self.counter.read_text().split() if self.counter.exists() else []

    def plan(self, on: str, **env: str) -> dict[str, Any]:
        return dict(json.loads(self.ok(on, "--json", "plan", **env).stdout))


def statuses(plan: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {node["path"]: (node["status"], node["reason"]["code"]) for node in plan["nodes"]}


def shared(ref: dict[str, Any]) -> tuple[str, str, str]:
    """(registry, repository, digest) of a snapshot ref pushed to the registry."""
    name, _, digest = ref["image"].partition("@")
    registry, _, repository = name.partition("/")
    return registry, repository, digest


@pytest.fixture
def make_registry(tmp_path: Path) -> Iterator[Callable[..., registry_server.Registry]]:
    started: list[registry_server.Registry] = []

    def make(*, deletes: bool = True) -> registry_server.Registry:
        try:
            registry = registry_server.start(tmp_path / f"registry-{len(started)}", deletes=deletes)
        except registry_server.Unavailable as exc:
            if os.environ.get("RIG_REQUIRE_REGISTRY") == "1":  # .ci/run installs it and sets this
                pytest.fail(f"RIG_REQUIRE_REGISTRY=1 but {exc}")
            pytest.skip(str(exc))
        started.append(registry)
        return registry

    yield make
    for registry in started:
        registry.stop()


@pytest.fixture
def daemons(docker_daemons: Callable[[str], EndpointDaemon]) -> tuple[EndpointDaemon, EndpointDaemon]:
    return docker_daemons("unix"), docker_daemons("tls")


def _clean(team: Team) -> None:
    """What the tests made on both daemons: workspaces and their containers, and every image from the registry."""
    for on in ("a", "b"):
        team.rig(on, "rm", "--all", "--yes", "--force")
    for daemon in (team.a, team.b):
        for project in ("a", "b"):
            labels = json.dumps({"label": [f"rig.project={team.root / project}"]})
            for container in daemon.api.get("/containers/json", params={"all": "true", "filters": labels}).json():
                daemon.api.delete(f"/containers/{container['Id']}", params={"force": "true"})
            for image in daemon.api.get("/images/json", params={"filters": labels}).json():
                daemon.api.delete(f"/images/{image['Id']}", params={"force": "true"})
        for image in daemon.api.get("/images/json").json():  # by name: one may also be the base image's
            for name in [*(image.get("RepoTags") or []), *(image.get("RepoDigests") or [])]:
                if name.startswith(f"{team.registry.name}/"):
                    daemon.api.delete(f"/images/{name}")


@pytest.fixture
def team(
    tmp_path: Path,
    postgres_server: PostgresServer,
    make_registry: Callable[..., registry_server.Registry],
    daemons: tuple[EndpointDaemon, EndpointDaemon],
) -> Iterator[Team]:
    made = Team(tmp_path, make_registry(), postgres_server.url(unique_schema("prebuilds")), *daemons, tmp_path / "ran")
    yield made
    _clean(made)


def image_on(daemon: EndpointDaemon, image: str) -> bool:
    return bool(daemon.api.get(f"/images/{image}/json").status_code == 200)


def test_an_apply_on_one_daemon_is_cached_on_another_and_forks_there_from_the_registry(team: Team) -> None:
    applied = json.loads(team.ok("a", "--json", "apply").stdout)
    assert team.ran() == ["base", "tools"]
    tools = applied["context"]["tools"]
    registry, repository, digest = shared(tools)
    assert (registry, repository) == (team.registry.name, "rig/team/tools")
    # Named by the task's cache key (its first 16 hex digits), the same in every clone.
    ((node_key,),) = rows(team.state, "SELECT node_key FROM workflow_node_runs WHERE node_path = 'tools'")
    assert team.registry.tags(repository) == [node_key.rpartition("-")[2][:16]]
    assert team.registry.digest(repository, digest) == digest
    assert sorted(team.registry.repositories()) == ["rig/team/base", "rig/team/tools"]

    plan = team.plan("b")
    assert (plan["cached_node_count"], plan["node_count"]) == (2, 2), plan
    assert statuses(plan) == {"base": ("cached", "cached"), "tools": ("cached", "cached")}
    assert team.ok("b", "apply", "--expect-cached")
    assert team.ran() == ["base", "tools"], "a handler ran on the second daemon"

    assert not image_on(team.b, tools["image"]), "the second daemon had the snapshot before the fork"
    name = team.ok("b", "fork", "ws").stdout.strip()
    assert name == "ws"
    assert team.ran() == ["base", "tools"]
    assert image_on(team.b, tools["image"]), "the fork did not pull the snapshot onto its daemon"
    assert team.ok("b", "exec", "ws", "--", "cat", "/base.txt", "/tools.txt").stdout == "base\ntools 1\n"
    labels = json.dumps({"label": ["rig.workspace=ws"]})
    (container,) = team.b.api.get("/containers/json", params={"filters": labels}).json()
    assert container["Image"] == tools["image"]


def test_a_manifest_deleted_from_the_registry_is_artifact_invalid_on_the_other_daemon(team: Team) -> None:
    applied = json.loads(team.ok("a", "--json", "apply").stdout)
    _, repository, digest = shared(applied["context"]["tools"])
    assert team.registry.delete(repository, digest) == 202
    # Still on daemon A, and never on B: only the registry's answer counts.
    assert image_on(team.a, applied["context"]["tools"]["image"])
    plan = team.plan("b")
    assert statuses(plan) == {"base": ("cached", "cached"), "tools": ("pending", "artifact-invalid")}
    team.ok("b", "apply")
    assert team.ran() == ["base", "tools", "tools"]  # only the task whose snapshot is gone ran again


def test_gc_deletes_only_the_manifests_nothing_refers_to(team: Team) -> None:
    first = json.loads(team.ok("a", "--json", "apply").stdout)["context"]
    second = json.loads(team.ok("a", "--json", "apply", RIG_TOOLS_VERSION="2").stdout)["context"]
    assert team.ran() == ["base", "tools", "tools"]
    old, new, base = shared(first["tools"]), shared(second["tools"]), shared(second["base"])
    assert old != new and base == shared(first["base"])
    # Not rig's: another workflow's repository, and an image under this one that rig did not push.
    for foreign in ("rig/other/tools:1", "rig/team/handmade:1"):
        reference = f"{team.registry.name}/{foreign}"
        team.a.api.post(
            f"/images/{team.a.image}/tag", params={"repo": reference.rpartition(":")[0], "tag": "1"}
        ).raise_for_status()
        pushed = team.a.api.post(
            f"/images/{reference.rpartition(':')[0]}/push", params={"tag": "1"}, headers={"X-Registry-Auth": "e30="}
        )
        assert pushed.status_code == 200 and "error" not in pushed.text, pushed.text
    team.ok("b", "fork", "ws", RIG_TOOLS_VERSION="2")

    report = json.loads(team.ok("b", "--json", "gc", RIG_TOOLS_VERSION="2").stdout)
    removed = [item for item in report["removed"] if item["resource"].get("registry")]
    assert [item["resource"]["digest"] for item in removed] == [old[2]], report
    assert team.registry.digest(old[1], old[2]) is None
    for kept in (new, base):
        assert team.registry.digest(kept[1], kept[2]) == kept[2]
    assert team.registry.tags("rig/other/tools") == ["1"] and team.registry.tags("rig/team/handmade") == ["1"]
    assert statuses(team.plan("a", RIG_TOOLS_VERSION="2")) == {
        "base": ("cached", "cached"),
        "tools": ("cached", "cached"),
    }


def test_a_registry_refusing_deletes_gets_one_warning_line_and_exit_0(
    team: Team, make_registry: Callable[..., registry_server.Registry]
) -> None:
    team.registry = make_registry(deletes=False)
    team.ok("a", "apply")
    first = json.loads(team.ok("a", "--json", "apply", RIG_TOOLS_VERSION="2").stdout)
    team.ok("a", "apply", RIG_TOOLS_VERSION="3")
    assert team.ran() == ["base", "tools", "tools", "tools"]
    _, repository, digest = shared(first["context"]["tools"])

    result = team.rig("b", "gc", RIG_TOOLS_VERSION="3")
    assert result.returncode == 0, result
    warnings = [line for line in result.stderr.splitlines() if "does not allow deletions" in line]
    assert len(warnings) == 1, result.stderr
    assert team.registry.name in warnings[0] and "2 unreferenced items kept" in warnings[0]
    assert team.registry.digest(repository, digest) == digest  # nothing deleted there
    report = json.loads(team.ok("b", "--json", "gc", RIG_TOOLS_VERSION="3").stdout)
    assert len(report["refused"]) == 2 and report["failed"] == []


@pytest.fixture
def quiet_team(
    tmp_path: Path,
    make_registry: Callable[..., registry_server.Registry],
    daemons: tuple[EndpointDaemon, EndpointDaemon],
) -> Iterator[tuple[Team, Relay]]:
    """One clone's SQLite state used from both daemons, its registry behind a relay that can go quiet."""
    registry = make_registry()
    host, port = registry.name.split(":")
    with Relay.tcp((host, int(port))) as relay:
        behind = registry_server.Registry(f"127.0.0.1:{relay.port}", registry.process, registry.root)
        made = Team(tmp_path, behind, "", *daemons, tmp_path / "ran", one_clone=True)
        yield made, relay
        relay.quiet()
        _clean(made)


def test_a_registry_that_never_answers_leaves_the_runs_cached_with_a_warning_within_the_bound(
    quiet_team: tuple[Team, Relay],
) -> None:
    team, relay = quiet_team
    team.ok("a", "apply")
    relay.quiet()  # from now on it accepts connections and never answers

    for _ in range(2):  # the second may be answered from rig's cache: it asks the registry all the same
        started = time.monotonic()
        result = team.rig("b", "--json", "plan", RIG_CHECK_TIMEOUT="3")
        elapsed = time.monotonic() - started
        assert result.returncode == 0, result
        plan = json.loads(result.stdout)
        assert statuses(plan) == {"base": ("cached", "cached"), "tools": ("cached", "cached")}
        warnings = [line for line in result.stderr.splitlines() if team.registry.name in line]
        assert len(warnings) == 1 and "cached runs are kept" in warnings[0], result.stderr
        assert elapsed < 3 * 2, f"the plan waited {elapsed:.1f}s for a registry bounded by 3s"
    assert team.ran() == ["base", "tools"]


def test_gc_on_the_daemon_that_made_a_snapshot_removes_its_own_copy_once_the_registry_forgot_it(team: Team) -> None:
    first = json.loads(team.ok("a", "--json", "apply").stdout)["context"]
    second = json.loads(team.ok("a", "--json", "apply", RIG_TOOLS_VERSION="2").stdout)["context"]
    team.ok("b", "gc", RIG_TOOLS_VERSION="2")  # the registry's copy and the journal entry go
    assert team.registry.digest(*shared(first["tools"])[1:]) is None
    assert image_on(team.a, first["tools"]["image_id"]), "gc on B reached into A's daemon"
    team.ok("a", "gc", RIG_TOOLS_VERSION="2")  # A's own copy, found by its labels
    assert not image_on(team.a, first["tools"]["image_id"])
    assert image_on(team.a, second["tools"]["image_id"]) and image_on(team.a, second["base"]["image_id"])


def test_doctor_shows_the_registry(team: Team) -> None:
    document = json.loads(team.ok("b", "--json", "doctor").stdout)
    (box,) = document["project"]["docker_providers"]
    assert (box["name"], box["host"], box["reachable"]) == ("box", team.b.host, True)
    registry = box["registry"]
    assert (registry["name"], registry["url"], registry["reachable"]) == (team.registry.name, team.registry.url, True)
    assert f"snapshots shared through {team.registry.url}, which answers" in team.ok("b", "doctor").stdout


@pytest.fixture
def one_clone(
    tmp_path: Path,
    make_registry: Callable[..., registry_server.Registry],
    daemons: tuple[EndpointDaemon, EndpointDaemon],
) -> Iterator[Team]:
    """One clone's SQLite state used from both daemons: what rig's own cache of plans can answer."""
    made = Team(tmp_path, make_registry(), "", *daemons, tmp_path / "ran", one_clone=True)
    yield made
    _clean(made)


def test_a_plan_answered_from_rigs_cache_asks_the_registry_as_the_full_plan_does(one_clone: Team) -> None:
    team = one_clone
    applied = json.loads(team.ok("a", "--json", "apply").stdout)

    loads = team.root / "loads"

    def both_ways() -> list[str]:
        off = team.rig("b", "--json", "plan", RIG_CACHE="off")
        computed = team.rig("b", "--json", "plan", RIG_TEST_LOADS=str(loads))
        before = loads.read_text().count("loaded")
        recalled = team.rig("b", "--json", "plan", RIG_TEST_LOADS=str(loads))
        assert loads.read_text().count("loaded") == before, "the config was loaded: rig's cache did not answer"
        assert off.returncode == computed.returncode == recalled.returncode == 0, (off, computed, recalled)
        assert off.stdout == computed.stdout == recalled.stdout
        return [f"{path}:{code}" for path, (_, code) in statuses(json.loads(recalled.stdout)).items()]

    assert both_ways() == ["base:cached", "tools:cached"]
    _, repository, digest = shared(applied["context"]["tools"])
    assert team.registry.delete(repository, digest) == 202
    assert both_ways() == ["base:cached", "tools:artifact-invalid"]


def test_a_plain_http_registry_still_verifies_https_it_is_redirected_to(
    make_registry: Callable[..., registry_server.Registry], daemons: tuple[EndpointDaemon, EndpointDaemon]
) -> None:
    """Its client loads no CA bundle up front; an https request (a blob kept elsewhere) still verifies."""
    import httpx

    from providers.docker.registry import RegistryClient
    from providers.docker.registry_name import parse_registry

    registry = make_registry()
    client = RegistryClient(parse_registry(registry.name, provider="docker"))
    try:
        assert client.exists("rig/none/none", "sha256:" + "0" * 64) is False  # plain HTTP, answered
        # The TLS daemon's certificate is signed by a private CA: a verifying client refuses it.
        tls = "https://" + daemons[1].host.removeprefix("tcp://") + "/version"
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client._http().get(tls, timeout=10)
    finally:
        client.close()


def test_a_registry_on_this_machine_is_never_asked_through_a_proxy(one_clone: Team) -> None:
    team = one_clone
    team.ok("a", "apply")
    closed = "http://127.0.0.1:9"  # nothing listens there: a request through it would fail
    proxies = {name: closed for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy")}
    result = team.rig("b", "--json", "plan", RIG_CACHE="off", no_proxy="", NO_PROXY="", **proxies)
    assert result.returncode == 0, result
    assert statuses(json.loads(result.stdout)) == {"base": ("cached", "cached"), "tools": ("cached", "cached")}
    assert team.registry.name not in result.stderr, result.stderr  # asked, and answered, directly
