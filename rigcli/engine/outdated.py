"""Whether a workspace is outdated, given what the plan would use for the workflow's final tasks now.

The rule (``engine/provenance.py`` says why) on plain data, so that ``rig ls``'s lean path
(``cli/commands/lean_ls.py``) judges from remembered final runs exactly as the full way judges a
fresh plan, and imports no more than the records.
"""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.records import WorkspaceRecord


def recorded_finals(record: WorkspaceRecord) -> dict[str, str] | None:
    """Final task path → run id, as the workspace recorded them; None when it recorded none."""
    provenance = record.provenance
    final = provenance.get("final") if isinstance(provenance, dict) else None
    if not isinstance(final, list):
        return None
    found: dict[str, str] = {}
    for item in final:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            run_id = item.get("run_id")
            found[str(item["path"])] = run_id if isinstance(run_id, str) else ""
    return found


def outdated_against(record: WorkspaceRecord, finals: Mapping[str, str | None]) -> bool | None:
    """Whether the workflow's final tasks now (path → the run the plan reuses, None when pending) are
    other runs than ``record`` was made from; None when the record has no provenance."""
    recorded = recorded_finals(record)
    if recorded is None:
        return None
    if set(recorded) != set(finals):
        return True
    return any(finals[path] is None or finals[path] != run_id for path, run_id in recorded.items())


__all__ = ["outdated_against", "recorded_finals"]
