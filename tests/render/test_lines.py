"""The event formatter: the kind -> method map, each event's lines, and streamed output joined into lines."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta

import pytest

from rigcli import events
from rigcli.events import (
    CommandCompleted,
    CommandOutput,
    Event,
    LogOutput,
    NodeCached,
    NodeCompleted,
    NodeFailed,
    NodeStarted,
    PlanCreated,
    StateLockTakeover,
    StateLockWaiting,
    WorkflowApplyCompleted,
    WorkflowApplyStarted,
    from_provider,
)
from rigcli.records import LockHolder, utc_datetime
from rigcli.render.lines import ASCII, EventFormatter


@pytest.fixture
def formatter() -> EventFormatter:
    shown = EventFormatter(debug=False)
    shown.g = ASCII
    return shown


def _texts(formatter: EventFormatter, *sequence: Event) -> list[str]:
    return [line.text for event in sequence for line in formatter.lines(event)]


def test_every_map_key_is_its_event_class_kind(formatter: EventFormatter) -> None:
    assert formatter.formatters  # the map is the renderer's whole vocabulary
    for kind, entry in formatter.formatters.items():
        assert kind == entry.event_class.KIND


def test_every_engine_event_kind_is_either_shown_or_deliberately_silent(formatter: EventFormatter) -> None:
    kinds = {
        cls.KIND
        for cls in vars(events).values()
        if isinstance(cls, type) and issubclass(cls, Event) and dataclasses.is_dataclass(cls) and cls.KIND
    }
    silent = {"plan.created", "operation.started", "operation.completed"}
    assert kinds - silent == set(formatter.formatters)


def test_an_apply_reads_as_lines(formatter: EventFormatter) -> None:
    texts = _texts(
        formatter,
        PlanCreated(workflow="web", cached_node_count=1, node_count=2),
        WorkflowApplyStarted(workflow="web", node_count=2),
        NodeStarted(node_path="base.install", index=1, total=2, run_id="r1"),
        LogOutput(node_path="base.install", stream="info", data="hello\n\nworld"),
        NodeFailed(node_path="base.install", error="Task base.install failed: boom\nTraceback...", run_id="r1"),
        WorkflowApplyCompleted(workflow="web", ran=1, cached_node_count=1, node_count=2),
    )
    assert texts[0] == "* apply web"
    assert texts[1] == "  * base.install"
    assert texts[2:4] == ["    hello", "    world"]
    assert texts[4].startswith("  x base.install  failed after ") and texts[4].endswith(
        ": Task base.install failed: boom"
    )
    assert texts[5].startswith("ok web: ran 1, cached 1 in ")


def test_an_apply_where_everything_is_cached_is_one_line(formatter: EventFormatter) -> None:
    texts = _texts(
        formatter,
        WorkflowApplyStarted(workflow="web", node_count=2),
        NodeCached(node_path="base", run_id="r1"),
        NodeCached(node_path="tools", run_id="r2"),
        WorkflowApplyCompleted(workflow="web", ran=0, cached_node_count=2, node_count=2),
    )
    assert texts == ["ok web: 2 cached"]


def test_cached_nodes_are_shown_once_something_runs(formatter: EventFormatter) -> None:
    texts = _texts(
        formatter,
        WorkflowApplyStarted(workflow="web", node_count=2),
        NodeCached(node_path="base", run_id="r1"),
        NodeStarted(node_path="tools", index=2, total=2, run_id="r2"),
        NodeCompleted(node_path="tools", run_id="r2"),
        WorkflowApplyCompleted(workflow="web", ran=1, cached_node_count=1, node_count=2),
    )
    assert texts[:3] == ["* apply web", "  ok base  cached", "  * tools"]
    assert texts[-1].startswith("ok web: ran 1, cached 1 in ")


def test_debug_lines_show_only_with_debug(formatter: EventFormatter) -> None:
    line = LogOutput(node_path="t", stream="debug", data="details")
    assert _texts(formatter, line) == []
    assert [item.text for item in EventFormatter(debug=True).lines(line)] == ["    debug details"]


def test_command_output_is_joined_into_whole_lines_per_command_and_stream(formatter: EventFormatter) -> None:
    def chunk(command: str, data: str, stream: str = "stdout") -> CommandOutput:
        return CommandOutput(node_path="t", command_id=command, stream=stream, data=data)

    assert _texts(formatter, chunk("c1", "par")) == []
    assert _texts(formatter, chunk("c2", "other\n")) == ["    other"]
    assert _texts(formatter, chunk("c1", "tial\nnext")) == ["    partial"]
    finished = CommandCompleted(node_path="t", command_id="c1", exit_code=3, truncated_bytes=10, name="build")
    assert _texts(formatter, finished) == ["    next", "    build exited 3", "    (10 bytes of output not kept)"]


def test_provider_events_show_their_scalar_fields(formatter: EventFormatter) -> None:
    event = from_provider({"type": "vm.created", "provider_id": "fake", "vm_id": "vm-1", "tags": ["a"]}, "t")
    assert _texts(formatter, event) == ["    vm.created vm_id=vm-1"]


def test_a_lock_wait_names_the_holder_who_runs_it_and_for_how_long(formatter: EventFormatter) -> None:
    holder = LockHolder(pid=42, host="box", user="dev", command="apply", started_at="")
    assert _texts(formatter, StateLockWaiting(holder=holder)) == [
        "* waiting for the state lock held by rig apply (pid 42 on box by dev)"
    ]
    started = (utc_datetime() - timedelta(seconds=125)).isoformat(timespec="microseconds")
    [line] = _texts(formatter, StateLockWaiting(holder=dataclasses.replace(holder, started_at=started)))
    assert re.fullmatch(
        r"\* waiting for the state lock held by rig apply \(pid 42 on box by dev\), held for 2m 0[5-9]s", line
    )
    nobody = LockHolder(pid=0, host="", user="", command="", started_at="")
    assert _texts(formatter, StateLockWaiting(holder=nobody)) == [
        "* waiting for the state lock held by another rig process"
    ]


def test_a_lock_takeover_names_the_dead_holder(formatter: EventFormatter) -> None:
    holder = LockHolder(pid=42, host="box", user="", command="fork", started_at="2026-11-30T00:00:00Z")
    assert _texts(formatter, StateLockTakeover(holder=holder)) == [
        "! took over the state lock from rig fork (pid 42 on box), which is no longer running"
    ]


def test_output_as_bytes_is_the_output_block_and_its_line_end_encoded() -> None:
    chunks = ["par", "tial ünï ✓\nnext\x1b]0;t\x07 line\n", "\n", "x" * 70_000 + "\nend", "\x07 of it\n"]
    # Whole clean lines (ASCII over the sanitizer's scan size, and not), and ones with something to
    # strip: a carriage return, a colour, a title whose sequence runs into the chunk's last line end.
    lines = ("a" * 99 + "\n") * 200
    chunks += [
        lines,
        "ünï ✓\n" * 3,
        lines + "cr\r\n",
        "\x1b[31mred\x1b[0m\n" + lines,
        lines + "t\x1b]0;title\n",
        "ok\n",
    ]

    def output(command: str, data: str) -> CommandOutput:
        return CommandOutput(node_path="t", command_id=command, stream="stdout", data=data)

    as_text, as_bytes = EventFormatter(debug=False), EventFormatter(debug=False)
    for data in chunks:
        block = as_text.output_block(output("c", data), "t ✓ | ")
        expected = None if block is None else (block + "\n").encode("utf-8")
        pieces = as_bytes.output_bytes(output("c", data), "t ✓ | ")
        assert (None if pieces is None else b"".join(pieces)) == expected
    assert b"".join(as_bytes.output_bytes(output("c", "tail\n"), "| ") or ()) == b"| tail\n"
