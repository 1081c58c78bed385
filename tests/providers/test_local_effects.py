"""The local provider journals machines and snapshots before making them, and removes them by effect id."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from providers.local import plugin
from rigcli.engine.effects import StoreEffects
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.state import create_state_store


class WatchedEffects(StoreEffects):
    """Records, at each ``requested``, whether the directory it names already exists."""

    def __init__(self, *args: Any, root: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.root = root
        self.seen: list[tuple[str, bool]] = []

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str:
        path = self.root / str(resource["path"])
        self.seen.append((kind, path.exists() or path.with_name(f".tmp-{path.name}").exists()))
        return super().requested(kind, resource, effect_id=effect_id)


@pytest.fixture
def journaled(make_harness: Any, project: Path) -> Iterator[tuple[Any, Any, Any, WatchedEffects]]:
    """(store, controller, runtime, run journal): the local provider wired to a real effects journal."""
    store = create_state_store(project_dir=project)
    store.sync_schema()
    harness = make_harness(plugin)
    run_effects = WatchedEffects(store, "local", ("run", "r1"), root=project / ".rig")
    controller = plugin.create_provider(replace(harness.setup, effects=StoreEffects(store, "local")))
    runtime = controller.runtime(replace(harness.context, effects=run_effects))
    yield store, controller, runtime, run_effects
    store.close()


def test_machines_and_snapshots_are_requested_before_they_exist_then_confirmed(journaled: Any) -> None:
    store, _, runtime, effects = journaled
    machine = runtime.create_machine()
    machine.write_text("a.txt", "a")
    ref = machine.snapshot_ref()

    assert effects.seen == [("machine", False), ("snapshot", False)]
    by_id = {effect.id: effect for effect in store.list_effects()}
    assert set(by_id) == {machine.id, ref["snapshot_id"]}  # the directory name is the effect id
    for effect in by_id.values():
        assert (effect.status, effect.owner_kind, effect.owner_id) == ("confirmed", "run", "r1")
    assert by_id[machine.id].identifiers() == {machine.id}

    machine.delete()
    runtime.delete_snapshot(ref)
    assert {effect.status for effect in store.list_effects()} == {"deleted"}


def test_remove_effect_removes_what_a_killed_create_left_and_nothing_else(journaled: Any, project: Path) -> None:
    store, controller, runtime, _ = journaled
    machines = project / ".rig" / "machines"
    machine = runtime.create_machine()
    half_copied = machines / ".tmp-m-0123456789ab"  # a cp -a cut off by kill -9
    (half_copied / "src").mkdir(parents=True)
    half_deleted = machines / f".del-{machine.id}-abcdef"
    half_deleted.mkdir()
    foreign = [machines / "my-notes", project / ".rig" / "snapshots" / "README"]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not rig's")

    found = {entry["id"]: entry["kind"] for entry in controller.find_effects()}
    assert found == {machine.id: "machine", "m-0123456789ab": "machine"}

    assert controller.remove_effect({"id": "m-0123456789ab", "kind": "machine", "resource": {}}) is True
    assert controller.remove_effect({"id": machine.id, "kind": "machine", "resource": {}}) is True
    assert controller.remove_effect({"id": machine.id, "kind": "machine", "resource": {}}) is False  # already gone
    assert sorted(path.name for path in machines.iterdir()) == ["my-notes"]
    assert all(path.read_text() == "not rig's" for path in foreign)
    assert store.get_effect(machine.id).status == "deleted"
    with pytest.raises(ProviderError, match="not a local machine or snapshot id"):
        controller.remove_effect({"id": "../../etc", "kind": "machine", "resource": {}})
