"""Workspace records (the fork/rm effects journal) and the last apply per workflow."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from rigcli.records import utc_now
from rigcli.state import StateStore
from rigcli.state.process import this_owner
from rigcli.state.workspaces import new_workspace
from rigcli.statuses import WorkspaceStatus
from tests.backends import dict_rows


def test_save_accepts_the_minimal_shape_and_defaults_status(store: StateStore) -> None:
    made = new_workspace("demo", "smoke", workflow_ctx={"ready": True}, ctx={"ready": True})
    saved = store.save_workspace(
        replace(made, id="workspace-2", created_at="2026-05-10T00:00:00.000Z", updated_at="2026-05-10T00:00:00.000Z")
    )
    expected = {
        "id": "workspace-2",
        "name": "demo",
        "workflow": "smoke",
        "workflow_ctx": {"ready": True},
        "ctx": {"ready": True},
        "status": "ready",
        "resources": [],
        "error": None,
        "created_at": "2026-05-10T00:00:00.000Z",
        "updated_at": "2026-05-10T00:00:00.000Z",
        "owner": this_owner(),  # user@host of whoever created it
        "pid": None,  # the process creating it, only while a fork records it
        "host": None,
        "provenance": None,  # what it was made from (fork records it)
        "expires_at": None,  # no ttl: it never expires
        "idle_stop": None,
        "reap_at": None,
    }
    assert saved.to_json() == expected
    assert list(saved.to_json()) == list(expected)  # rig --json fork/rm/ls show the keys in this order
    assert store.list_workspaces() == [saved]
    assert store.get_workspace("demo", "smoke") == saved
    assert store.get_workspace("demo", "other") is None
    assert store.get_workspace("nobody", "smoke") is None


def test_save_upserts_on_workflow_and_name(store: StateStore) -> None:
    first = store.save_workspace(new_workspace("dev", "web", status="creating", ctx=None))
    assert len(first.id) == 32 and first.status == "creating"
    second = store.save_workspace(replace(first, ctx={"machine": "m1"}, updated_at=utc_now()))
    # A changed copy keeps what it did not change; the row is updated, not duplicated.
    assert second.id == first.id
    assert second.created_at == first.created_at
    assert second.status == "creating"
    assert second.ctx == {"machine": "m1"}
    assert second.updated_at >= first.updated_at
    assert store.list_workspaces() == [second]
    # (workflow, name) is the key: a record made anew under the same name replaces the row.
    third = store.save_workspace(new_workspace("dev", "web"))
    assert store.list_workspaces() == [third] and third.id != first.id


def test_list_is_sorted_by_name_and_filtered_by_workflow(store: StateStore) -> None:
    for name, workflow in [("zeta", "web"), ("alpha", "web"), ("mid", "api")]:
        store.save_workspace(new_workspace(name, workflow, ctx={}))
    assert [w.name for w in store.list_workspaces()] == ["alpha", "mid", "zeta"]
    assert [w.name for w in store.list_workspaces("web")] == ["alpha", "zeta"]
    assert store.list_workspaces("none") == []


def test_same_name_in_two_workflows_is_two_records(store: StateStore) -> None:
    # Which one a bare name means is the engine's question (tests/engine, tests/cli); here both stay apart.
    store.save_workspace(new_workspace("dev", "web", ctx={"w": 1}))
    store.save_workspace(new_workspace("dev", "api", ctx={"a": 1}))
    assert [(w.workflow, w.ctx) for w in store.list_workspaces()] == [("api", {"a": 1}), ("web", {"w": 1})]
    found = store.get_workspace("dev", "api")
    assert found is not None and found.ctx == {"a": 1}


def test_delete_reports_whether_something_was_deleted(store: StateStore) -> None:
    store.save_workspace(new_workspace("dev", "web"))
    store.save_workspace(new_workspace("dev", "api"))
    assert store.delete_workspace("dev", "web") is True
    assert store.delete_workspace("dev", "web") is False
    assert [(w.name, w.workflow) for w in store.list_workspaces()] == [("dev", "api")]


def test_resources_are_the_live_effects_journaled_for_the_workspace_and_never_a_copy(
    store: StateStore, state_location: str
) -> None:
    record = store.save_workspace(new_workspace("dev", "web", status="creating"))
    store.save_workspace(new_workspace("dev", "api"))

    def request(effect_id: str, owner_kind: str, owner_id: str, index: int) -> None:
        resource = {"machine_id": effect_id, "index": index}
        store.request_effect(
            effect_id, provider_id="local", kind="machine", resource=resource, owner_kind=owner_kind, owner_id=owner_id
        )

    threads = [
        threading.Thread(target=request, args=(f"m-{index:02d}", "workspace", record.id, index)) for index in range(20)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    request("m-ghost", "workspace", "no-such-record", 99)  # owned by no record: on none
    request("m-run", "run", record.id, 98)  # a run's, even with the same id: not the workspace's
    store.confirm_effect("m-03")
    store.delete_effect("m-19")  # gone: no longer one of its resources

    found = store.get_workspace("dev", "web")
    assert found is not None
    assert sorted(item["resource"]["index"] for item in found.resources) == list(range(19))
    by_id = {item["effect_id"]: item for item in found.resources}
    assert by_id["m-03"] == {
        "effect_id": "m-03",
        "provider_id": "local",
        "kind": "machine",
        "status": "confirmed",
        "resource": {"machine_id": "m-03", "index": 3},
    }
    assert by_id["m-04"]["status"] == "requested"
    other = store.get_workspace("dev", "api")
    assert other is not None and other.resources == []
    assert [item.resources for item in store.list_workspaces("web")] == [found.resources]
    # A record is saved without them: the journal is their one book.
    saved = store.save_workspace(replace(found, status="ready", resources=[{"machine_id": "m-copy"}]))
    assert saved.resources == found.resources
    assert dict_rows(state_location, "SELECT resources_json FROM workspaces") == [{"resources_json": "[]"}] * 2


def test_status_moves_through_the_effects_journal(store: StateStore) -> None:
    creating = store.save_workspace(new_workspace("dev", "web", status="creating"))
    failed = store.save_workspace(replace(creating, status="failed", error="create hook raised"))
    assert (failed.status, failed.error) == ("failed", "create hook raised")
    removing = store.save_workspace(replace(failed, status="removing", error=None))
    assert (removing.status, removing.error) == ("removing", None)
    with pytest.raises(ValueError, match="status"):
        store.save_workspace(replace(removing, status="gone"))
    with pytest.raises(ValueError, match="status"):
        store.save_workspace(replace(removing, status="weird"))
    with pytest.raises(TypeError, match="colour"):  # a record has its fields and no others
        store.save_workspace(replace(removing, colour="red"))
    stored = store.get_workspace("dev", "web")
    assert stored is not None and stored.status == "removing"  # the refused saves wrote nothing


def _last_apply(location: str, workflow: str) -> dict[str, object] | None:
    """The workflow_applies row, read with the driver directly (not through rig)."""
    found = dict_rows(location, "SELECT * FROM workflow_applies WHERE workflow = ?", (workflow,))
    return found[0] if found else None


def test_record_and_read_last_apply(store: StateStore, state_location: str) -> None:
    assert _last_apply(state_location, "web") is None
    store.record_apply("web", provider_fingerprint="p1", cached_node_count=1, node_count=3)
    latest = store.record_apply("web", provider_fingerprint="p2", cached_node_count=3, node_count=3)
    stored = _last_apply(state_location, "web")
    assert stored == latest.to_json()
    assert stored is not None and (stored["provider_fingerprint"], stored["cached_node_count"]) == ("p2", 3)
    assert _last_apply(state_location, "api") is None


def test_due_workspaces_are_those_whose_reap_time_has_come_never_one_being_created(store: StateStore) -> None:
    def saved(name: str, status: WorkspaceStatus, reap_at: str | None) -> None:
        store.save_workspace(new_workspace(name, "web", status=status, reap_at=reap_at))

    saved("past", "ready", "2026-01-01T00:00:00.000000+00:00")
    saved("now", "failed", "2026-06-01T00:00:00.000000+00:00")
    saved("later", "ready", "2026-12-01T00:00:00.000000+00:00")
    saved("never", "ready", None)
    saved("creating", "creating", "2026-01-01T00:00:00.000000+00:00")  # its create may still run
    saved("marked", "reap-failed", "2026-12-01T00:00:00.000000+00:00")  # its retry is later
    now = "2026-06-01T00:00:00.000000+00:00"
    assert [record.name for record in store.due_workspaces(now)] == ["past", "now"]
    assert [record.name for record in store.due_workspaces(now, failed_too=True)] == ["past", "now", "marked"]


def test_adopt_replacement_swaps_the_effects_and_the_row_in_one_go(store: StateStore) -> None:
    old = store.save_workspace(new_workspace("dev", "web", ctx={"machine": "m-old"}))

    def request(effect_id: str, owner_kind: str, owner_id: str) -> None:
        store.request_effect(
            effect_id, provider_id="local", kind="machine", resource={}, owner_kind=owner_kind, owner_id=owner_id
        )

    request("m-old", "workspace", old.id)
    request("m-new", "replacement", f"{old.id}:abc")
    request("m-other", "replacement", f"{old.id}:def")  # another replacement's: untouched
    swapped = store.adopt_replacement(replace(old, ctx={"machine": "m-new"}), f"{old.id}:abc")
    assert swapped is not None and swapped.id == old.id and swapped.ctx == {"machine": "m-new"}
    assert [item["effect_id"] for item in swapped.resources] == ["m-new"]
    owners = {effect.id: (effect.owner_kind, effect.owner_id) for effect in store.list_effects()}
    assert owners == {
        "m-old": ("retired", old.id),
        "m-new": ("workspace", old.id),
        "m-other": ("replacement", f"{old.id}:def"),
    }

    store.delete_workspace("dev", "web")  # removed meanwhile: nothing changes
    assert store.adopt_replacement(replace(old, ctx={}), f"{old.id}:def") is None
    assert store.list_effects(owner_kind="replacement")[0].id == "m-other"
