"""What changed in a docker workspace's container since it was made: the daemon's diff against its image.

``GET /containers/{id}/changes`` lists every path of the container's writable layer: ``0`` modified,
``1`` added, ``2`` deleted, a directory listed as modified whenever anything under it is. rig shows
what a person wrote: a directory modified only because of what is below it is left out, and an
added or deleted directory is named once (``/root/build/``), not file by file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rigcli.errors import ProviderError
from rigcli.provider_api import MachineChange
from rigcli.statuses import ChangeKind

if TYPE_CHECKING:
    from providers.docker.client import DockerClient

KINDS: dict[int, ChangeKind] = {0: "changed", 1: "added", 2: "deleted"}


def container_changes(client: DockerClient, container: str) -> list[MachineChange]:
    """The paths written, added or deleted in ``container`` (its name or id) against its image; none
    when the container is gone (nothing in it to lose)."""
    response = client.request("GET", f"/containers/{container}/changes", ok=(200, 404), what="container changes")
    if response.status_code == 404:
        return []
    listed: Any = response.json()
    if listed is not None and not isinstance(listed, list):
        raise ProviderError(f"Docker container changes answered {type(listed).__name__}, not a list")
    return shown_changes(
        {str(item["Path"]): KINDS.get(int(item["Kind"]), "changed") for item in listed or [] if isinstance(item, dict)}
    )


def shown_changes(paths: dict[str, ChangeKind]) -> list[MachineChange]:
    """``paths`` as a person reads them: parents that changed only through their children left out,
    and what lies under an added or deleted directory folded into it."""
    ordered = sorted(paths)
    shown: list[MachineChange] = []
    folded: str | None = None  # an added or deleted directory whose entries are not listed
    for index, path in enumerate(ordered):
        if folded is not None and path.startswith(folded):
            continue
        kind = paths[path]
        has_children = index + 1 < len(ordered) and ordered[index + 1].startswith(path.rstrip("/") + "/")
        if has_children and kind == "changed":
            continue  # a directory that changed because what is in it did
        if has_children:
            folded = path.rstrip("/") + "/"
            shown.append(MachineChange(kind, folded))
            continue
        shown.append(MachineChange(kind, path))
    return shown


__all__ = ["container_changes", "shown_changes"]
