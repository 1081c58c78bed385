"""Events are values: set once by their constructor, never changed by a listener, and documented."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from rigcli import events

EVENT_CLASSES = sorted(
    (cls for cls in vars(events).values() if inspect.isclass(cls) and issubclass(cls, events.Event)),
    key=lambda cls: cls.__name__,
)


def test_every_event_kind_is_a_documented_dataclass() -> None:
    assert len(EVENT_CLASSES) >= 28
    for cls in EVENT_CLASSES:
        assert dataclasses.is_dataclass(cls), cls
        assert cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("), f"{cls.__name__} has no docstring"


def test_a_listener_cannot_change_an_event_it_was_given() -> None:
    event = events.NodeFailed(node_path="base.install", error="exit 1", run_id="r1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.error = "fine"
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.note = "added"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del event.run_id
    assert event.to_json() == {"type": "node.failed", "node_path": "base.install", "error": "exit 1", "run_id": "r1"}


def test_a_changed_copy_is_a_new_event() -> None:
    output = events.CommandOutput(node_path="a", command_id="c1", stream="stdout", data="token=abc\n")
    masked = dataclasses.replace(output, data="token=***\n")
    assert (output.data, masked.data) == ("token=abc\n", "token=***\n")
    provided = events.from_provider({"type": "vm.created", "vm_id": "vm-1"}, "base")
    assert provided.to_json() == {"type": "vm.created", "node_path": "base", "vm_id": "vm-1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        provided.extra = {}
