"""``rig plan`` and ``rig ls`` of a local project without a controller (``SupportsDirectStatus``).

The local provider asks nothing remote: a snapshot is valid while it is complete on disk, a
machine ``running`` while its directory exists and ``missing`` once it is gone — the answers its
controller gives (``LocalController.validate_artifact``, ``machine_status``), by the same rules
(``layout.py``), from the state directory alone.
"""

from __future__ import annotations

import os

from providers.local.layout import PROVIDER_ID, SNAPSHOT_KIND, machine_dir, snapshot_complete

TYPE_CHECKING = False  # not typing's: a remembered listing's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from rigcli.provider_api import EffectEntry


class LocalStatus:
    """One local definition's answers: no checks, snapshots on disk, machines' directories."""

    def __init__(self, state_dir: str) -> None:
        self.root = state_dir

    def checks(self) -> list[dict[str, object]]:
        return []  # the local provider has none

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool | None:
        snapshot_id = ref.get("snapshot_id")
        if ref.get("provider") != PROVIDER_ID or ref.get("kind") != SNAPSHOT_KIND or not isinstance(snapshot_id, str):
            return False  # the controller's snapshot_id_of refuses it: not valid
        return snapshot_complete(self.root, snapshot_id)

    def probe(self, project_dir: str, resources: Sequence[EffectEntry]) -> dict[str, tuple[str, str]]:
        answers: dict[str, tuple[str, str]] = {}
        for resource in resources:
            if resource["kind"] != "machine":
                continue
            path = machine_dir(self.root, resource["id"])
            if path is None:
                answers[resource["id"]] = ("unknown", f"{resource['id']!r} is not a local machine id")
                continue
            shown = os.path.relpath(path, project_dir)
            found = os.path.isdir(path)
            answers[resource["id"]] = (
                ("running", f"directory {shown}") if found else ("missing", f"directory {shown} is gone")
            )
        return answers

    def close(self) -> None:
        return None


__all__ = ["LocalStatus"]
