"""The daemon's container diff as people read it: parents changed only through their children left out,
an added or deleted directory named once."""

from __future__ import annotations

from providers.docker.changes import shown_changes
from rigcli.provider_api import MachineChange


def test_a_diff_is_shown_as_what_was_written() -> None:
    diff = {
        "/workspace": "changed",
        "/workspace/notes": "added",
        "/workspace/build": "added",
        "/workspace/build/a": "added",
        "/workspace/build/a/b.o": "added",
        "/workspace/version": "changed",
        "/workspace/src": "deleted",
        "/etc": "changed",
        "/etc/motd": "deleted",
    }
    assert shown_changes(diff) == [  # type: ignore[arg-type]
        MachineChange("deleted", "/etc/motd"),
        MachineChange("added", "/workspace/build/"),
        MachineChange("added", "/workspace/notes"),
        MachineChange("deleted", "/workspace/src"),
        MachineChange("changed", "/workspace/version"),
    ]
    assert shown_changes({}) == []
