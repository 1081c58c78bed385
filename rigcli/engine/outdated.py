"""Whether a workspace is outdated, given what the plan would use for the workflow's final tasks now.

The rule (``engine/provenance.py`` says why) on plain data, so that ``rig ls`` answered from the cache
(``cli/commands/listing.py``) judges from remembered final runs exactly as a load judges a
fresh plan, and imports nothing.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping


def recorded_finals(provenance: object) -> dict[str, str] | None:
    """Final task path → run id, as a workspace's ``provenance`` recorded them; None when it recorded none."""
    final = provenance.get("final") if isinstance(provenance, dict) else None
    if not isinstance(final, list):
        return None
    found: dict[str, str] = {}
    for item in final:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            run_id = item.get("run_id")
            found[str(item["path"])] = run_id if isinstance(run_id, str) else ""
    return found


def outdated_against(provenance: object, finals: Mapping[str, str | None]) -> bool | None:
    """Whether the workflow's final tasks now (path → the run the plan reuses, None when pending) are
    other runs than a workspace with this ``provenance`` was made from; None when it has none."""
    recorded = recorded_finals(provenance)
    if recorded is None:
        return None
    if set(recorded) != set(finals):
        return True
    return any(finals[path] is None or finals[path] != run_id for path, run_id in recorded.items())


__all__ = ["outdated_against", "recorded_finals"]
