"""The provider kit on its own: a trivial provider built from it gets exec, probe, events and cleanup."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from provider_helpers import Harness

from rigcli.authoring.values import SecretValue
from rigcli.engine.effects import StoreEffects
from rigcli.errors import ProviderError
from rigcli.provider_api import Cancellation, EffectEntry, ProviderSetup, RuntimeContext
from rigcli.provider_kit import (
    BaseController,
    BaseMachine,
    BaseRuntime,
    CommandFailedError,
    CommandRecorder,
    CommandResult,
    exit_status,
    ref_id,
)
from rigcli.state import create_state_store


class TinyMachine(BaseMachine["TinyRuntime"]):
    provider_id = "tiny"

    def _run(
        self,
        command: str,
        *,
        env: dict[str, str],
        cwd: str,
        timeout: float | None,
        recorder: CommandRecorder,
        cancellation: Cancellation,
    ) -> CommandResult:
        recorder.started()
        done = subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, timeout=timeout)
        recorder.feed("stdout", done.stdout)
        recorder.feed("stderr", done.stderr)
        return recorder.finish(exit_status(done.returncode))

    def _remove(self) -> None:
        self._runtime.controller.machines.discard(self.id)


class TinyRuntime(BaseRuntime["TinyController"]):
    def create_machine(self) -> TinyMachine:
        machine = TinyMachine(self, f"tiny-{len(self.controller.machines)}")
        self.controller.machines.add(machine.id)
        self.event("machine.created", machine=machine.id)
        return machine


class TinyController(BaseController):
    provider_id = "tiny"

    def __init__(self, setup: ProviderSetup) -> None:
        super().__init__(setup)
        self.machines: set[str] = set()

    def runtime(self, context: RuntimeContext) -> TinyRuntime:
        return TinyRuntime(self, context)

    def delete_machine(self, machine_id: str) -> bool:
        known = machine_id in self.machines
        self.machines.discard(machine_id)
        return known

    def list_machines(self) -> list[dict[str, Any]]:
        return [{"provider": "tiny", "id": machine_id} for machine_id in sorted(self.machines)]


class TinyPlugin:
    provider_id = "tiny"

    def create_provider(self, setup: ProviderSetup) -> TinyController:
        return TinyController(setup)


MakeHarness = Callable[..., Harness]
TINY = (TinyMachine, TinyRuntime, TinyController, TinyPlugin)


def test_a_trivial_provider_is_short() -> None:
    # Counted in statements, not lines, so that a formatter wrapping a signature changes nothing.
    statements = [
        node
        for part in TINY
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(part))))
        if isinstance(node, ast.stmt)
    ]
    assert len(statements) <= 33, len(statements)


def test_exec_checks_and_names_the_command_and_exit_code(make_harness: MakeHarness) -> None:
    harness = make_harness(TinyPlugin(), {"env": {"GREETING": "hi"}})
    machine = harness.runtime.create_machine()
    result = machine.exec("echo $GREETING; echo $EXTRA >&2; exit 3", env={"EXTRA": "oops"}, check=False)
    assert (result.exit_code, result.ok, result.stdout, result.stderr) == (3, False, "hi\n", "oops\n")
    with pytest.raises(CommandFailedError, match=r'Command "build" failed with exit code 3: oops') as raised:
        machine.exec("echo oops >&2; exit 3", name="build")
    assert raised.value.result.exit_code == 3
    started = harness.of_type("command.started")[0]
    assert (started["provider_id"], started["machine"], started["node_path"]) == ("tiny", machine.id, "base.install")
    assert [event["exit_code"] for event in harness.of_type("command.completed")] == [3, 3]


def test_secrets_from_the_config_are_masked_in_failures(make_harness: MakeHarness) -> None:
    machine = make_harness(TinyPlugin(), {"token": SecretValue("s3cret")}).runtime.create_machine()
    with pytest.raises(CommandFailedError) as raised:
        machine.exec("echo s3cret >&2; exit 1")
    assert "s3cret" not in str(raised.value) and "***" in str(raised.value)


def test_probe_never_raises(make_harness: MakeHarness) -> None:
    machine = make_harness(TinyPlugin()).runtime.create_machine()
    assert machine.probe("exit 9").exit_code == 9
    assert machine.probe("true").ok
    refused = machine.probe("   ")
    assert (refused.exit_code, refused.name) == (127, "probe")
    assert "non-empty shell command" in refused.stderr


def test_events_listings_deletion_and_cleanup(make_harness: MakeHarness) -> None:
    harness = make_harness(TinyPlugin())
    runtime, controller = harness.runtime, harness.controller
    first, second = runtime.create_machine(), runtime.create_machine()
    created = harness.of_type("machine.created")[0]
    assert (created["provider_id"], created["node_path"], created["machine"]) == ("tiny", "base.install", first.id)
    assert [item["id"] for item in runtime.list_machines()] == [first.id, second.id]
    assert runtime.delete_machine(first.id) is True
    assert runtime.delete_machine(first.id) is False
    second.delete()
    assert [event["machine"] for event in harness.of_type("machine.deleted")] == [first.id, second.id]
    third = runtime.create_machine()
    assert controller.remove_effect({"id": third.id, "kind": "machine", "resource": {}}) is True
    assert runtime.list_machines() == []
    assert runtime.list_snapshots() == [] and runtime.delete_snapshot({"provider": "tiny", "kind": "x"}) is False
    with pytest.raises(ProviderError, match="tiny machines cannot be snapshotted"):
        third.snapshot_ref()


class JournaledRuntime(TinyRuntime):
    """TinyRuntime making its machines through the kit's journal."""

    def create_machine(self) -> TinyMachine:
        with self.making("machine") as machine_id:
            self.controller.machines.add(machine_id)
        return TinyMachine(self, machine_id)


def test_making_journals_before_and_confirms_after_and_the_base_controller_removes_and_finds(
    make_harness: MakeHarness,
) -> None:
    harness = make_harness(TinyPlugin())
    controller = harness.controller
    store = create_state_store(project_dir=harness.setup.project_dir)
    store.sync_schema()
    try:
        context = replace(harness.context, effects=StoreEffects(store, "tiny", ("workspace", "w-1")))
        runtime = JournaledRuntime(controller, context)
        made = runtime.create_machine()
        effect = store.get_effect(made.id)
        assert effect is not None
        assert (effect.kind, effect.status, effect.owner_kind, effect.owner_id, effect.resource) == (
            "machine",
            "confirmed",
            "workspace",
            "w-1",
            {"machine_id": made.id},
        )
        created = harness.of_type("machine.created")[-1]
        assert (created["machine"], created["effect_id"], created["provider_id"]) == (made.id, made.id, "tiny")

        with pytest.raises(RuntimeError, match="cut off"), runtime.making("machine") as cut_off:
            controller.machines.add(cut_off)  # made, but rig dies before it can say so
            raise RuntimeError("cut off half-way")
        half = store.get_effect(cut_off)
        assert half is not None and half.status == "requested"  # journaled before it existed

        controller.machines.add("someone-elses")  # not named by the kit: never rig's to collect
        assert sorted(item["id"] for item in controller.find_effects()) == sorted([made.id, cut_off])
        assert {item["kind"] for item in controller.find_effects()} == {"machine"}
        entry: EffectEntry = {"id": cut_off, "kind": "machine", "resource": {"machine_id": cut_off}}
        assert controller.remove_effect(entry) is True
        assert controller.remove_effect(entry) is False  # already gone counts as removed
        with pytest.raises(ProviderError, match="tiny cannot remove a volume"):
            controller.remove_effect({"id": "v-1", "kind": "volume", "resource": {}})

        made.delete()
        gone = store.get_effect(made.id)
        assert gone is not None and gone.status == "deleted"
        assert sorted(controller.machines) == ["someone-elses"]
    finally:
        store.close()


def test_a_config_env_that_is_not_a_mapping_is_refused(make_harness: MakeHarness) -> None:
    with pytest.raises(ProviderError, match="tiny provider config env= must be a mapping of strings"):
        make_harness(TinyPlugin(), {"env": ["A=1"]})


def test_ref_id_reads_only_this_providers_refs() -> None:
    spec: dict[str, Any] = {"provider_id": "tiny", "kind": "box", "key": "box_id", "what": "tiny box"}
    assert ref_id("b-1", **spec) == "b-1"
    assert ref_id({"provider": "tiny", "kind": "box", "box_id": "b-2"}, **spec) == "b-2"
    for wrong in ({"provider": "other", "kind": "box", "box_id": "b-3"}, {"provider": "tiny", "kind": "box"}, ""):
        with pytest.raises(ProviderError, match="Not a tiny box ref"):
            ref_id(wrong, **spec)


def test_the_kit_stays_light() -> None:
    code = "import sys, rigcli.provider_kit; print(sorted({'httpx', 'rich', 'typer', 'sqlmodel'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
