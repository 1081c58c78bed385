"""gc's order: exec sessions first, children before what they were made from; a kept child keeps its parents."""

from __future__ import annotations

from rigcli.engine.gc_order import kept_parents, removal_order
from rigcli.records import EffectRecord


def _effect(effect_id: str, kind: str = "image", parent: str | None = None) -> EffectRecord:
    resource: dict[str, object] = {"image_id": f"sha256:{effect_id}"}
    if parent is not None:
        resource["parent"] = f"sha256:{parent}"
    return EffectRecord(
        id=effect_id,
        provider_id="docker",
        kind=kind,
        status="confirmed",
        resource=resource,  # type: ignore[arg-type]
        owner_kind=None,
        owner_id=None,
        error=None,
        created_at="",
        updated_at="",
        pid=None,
        host=None,
    )


def test_children_come_before_their_parents_and_sessions_before_everything() -> None:
    base, child, grandchild = _effect("a"), _effect("b", parent="a"), _effect("c", parent="b")
    session, other = _effect("x", kind="exec"), _effect("d")
    items = [(base, 1), (child, 2), (other, 3), (grandchild, 4), (session, 5)]

    ordered = [effect.id for effect, _ in removal_order(items)]

    assert ordered[0] == "x"
    assert ordered.index("c") < ordered.index("b") < ordered.index("a")
    assert sorted(ordered) == ["a", "b", "c", "d", "x"]


def test_a_kept_child_keeps_what_it_was_made_from_all_the_way_down() -> None:
    kept = [_effect("c", parent="b")]
    others = [_effect("a"), _effect("b", parent="a"), _effect("d")]

    found = kept_parents(kept, others)

    assert sorted(others[index].id for index in found) == ["a", "b"]
    assert found[1].id == "c" and found[0].id == "b"
