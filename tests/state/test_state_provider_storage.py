"""Project provider storage: JSON records per provider in the provider_state table."""

from __future__ import annotations

import json

import pytest

from rigcli.errors import ProviderError
from rigcli.provider_api import KeyValueStore
from rigcli.state import StateStore
from tests.backends import rows


def test_round_trip_and_the_row_shape(store: StateStore, state_location: str) -> None:
    storage: KeyValueStore = store.provider_storage("test")
    assert storage.get("ready") is None
    storage.set("ready", {"value": "provider"})

    record = storage.get("ready")
    assert record is not None
    assert (record["provider_id"], record["key"], record["value"]) == ("test", "ready", {"value": "provider"})
    assert record["created_at"] == record["updated_at"]

    [row] = rows(
        state_location, "SELECT value_json FROM provider_state WHERE provider_id = 'test' AND \"key\" = 'ready'"
    )
    assert json.loads(row[0])["value"] == "provider"


def test_set_keeps_created_at_and_moves_updated_at(store: StateStore) -> None:
    storage = store.provider_storage("test")
    storage.set("token", "one")
    first = storage.get("token")
    storage.set("token", "two")
    second = storage.get("token")
    assert first is not None and second is not None
    assert second["value"] == "two"
    assert second["created_at"] == first["created_at"]
    assert second["updated_at"] > first["updated_at"]


def test_entries_are_sorted_filtered_by_prefix_and_per_provider(store: StateStore) -> None:
    mine, theirs = store.provider_storage("mine"), store.provider_storage("theirs")
    for key in ["vm:b", "vm:a", "auth", "vm%", "VM:c"]:
        mine.set(key, key)
    theirs.set("vm:z", 1)

    assert [record["key"] for record in mine.entries()] == ["VM:c", "auth", "vm%", "vm:a", "vm:b"]
    assert [record["key"] for record in mine.entries("vm:")] == ["vm:a", "vm:b"]
    assert [record["key"] for record in theirs.entries("vm")] == ["vm:z"]
    assert mine.entries("zzz") == []


def test_delete_and_clear(store: StateStore) -> None:
    storage, other = store.provider_storage("test"), store.provider_storage("other")
    storage.set("a", 1)
    storage.set("b", 2)
    other.set("a", 3)
    assert storage.delete("a") is True
    assert storage.delete("a") is False
    assert storage.clear() == 1
    assert storage.entries() == []
    kept = other.get("a")
    assert kept is not None and kept["value"] == 3


def test_non_json_values_are_refused(store: StateStore) -> None:
    storage = store.provider_storage("test")
    with pytest.raises(ProviderError, match=r"must be JSON-serializable \(at nested\[1\]\)"):
        storage.set("bad", {"nested": [1, float("nan")]})
    assert storage.get("bad") is None
