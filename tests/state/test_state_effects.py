"""The effects journal: requested before the provider call, confirmed after, deleted once gone."""

from __future__ import annotations

import os
from typing import Any

import pytest

from rigcli.errors import StateError, TaskError
from rigcli.state.process import this_host


def test_an_effect_goes_requested_confirmed_deleted(store: Any) -> None:
    requested = store.request_effect(
        "m-1", provider_id="local", kind="machine", resource={"path": "machines/m-1"}, owner_kind="run", owner_id="r1"
    )
    assert (requested.status, requested.pid, requested.host) == ("requested", os.getpid(), this_host())
    assert store.get_effect("m-1") == requested

    store.confirm_effect("m-1", {"machine_id": "m-1"})
    confirmed = store.get_effect("m-1")
    assert confirmed.status == "confirmed"
    assert confirmed.resource == {"path": "machines/m-1", "machine_id": "m-1"}  # merged, not replaced
    assert confirmed.identifiers() == {"m-1"}

    assert store.delete_effect("m-1") is True
    assert store.delete_effect("m-1") is False  # a retry never "deletes" twice
    assert store.get_effect("m-1").status == "deleted"
    store.confirm_effect("m-1", {"late": True})  # a late confirmation never resurrects it
    assert store.get_effect("m-1").status == "deleted"
    assert store.forget_deleted_effects() == 1
    assert store.get_effect("m-1") is None


def test_effect_ids_are_never_reused_and_must_be_requested_first(store: Any) -> None:
    store.request_effect("c-1", provider_id="docker", kind="container", resource={})
    with pytest.raises(StateError, match="already journaled"):
        store.request_effect("c-1", provider_id="docker", kind="container", resource={})
    with pytest.raises(StateError, match="Unknown effect"):
        store.confirm_effect("never-requested")
    with pytest.raises(TaskError, match="JSON-serializable"):
        store.request_effect("c-2", provider_id="docker", kind="container", resource={"bad": {1, 2}})


def test_effects_are_listed_by_owner_status_and_provider(store: Any) -> None:
    store.request_effect("a", provider_id="local", kind="machine", resource={}, owner_kind="workspace", owner_id="w")
    store.request_effect("b", provider_id="docker", kind="image", resource={"image_id": "sha256:1"})
    store.request_effect("c", provider_id="local", kind="snapshot", resource={}, owner_kind="workspace", owner_id="w")
    store.confirm_effect("b")
    store.delete_effect("c")
    store.note_effect_error("a", "daemon unreachable")

    assert [e.id for e in store.list_effects()] == ["a", "b", "c"]
    assert [e.id for e in store.list_effects(owner_kind="workspace", owner_id="w")] == ["a", "c"]
    assert [e.id for e in store.list_effects(statuses=["requested", "confirmed"])] == ["a", "b"]
    assert [e.id for e in store.list_effects(provider_id="docker")] == ["b"]
    assert store.list_effects(statuses=[]) == []
    assert store.get_effect("a").error == "daemon unreachable"
    assert store.get_effect("b").identifiers() == {"b", "sha256:1"}
