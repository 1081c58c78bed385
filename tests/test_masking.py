"""The secret masker: registry, text and JSON masking, chunked streams and the event bus."""

from __future__ import annotations

import os
import uuid

from rigcli import masking
from rigcli.authoring.values import SecretValue, define_provider, secret
from rigcli.event_bus import EventBus
from rigcli.events import CommandCompleted, CommandOutput, Event, LogOutput, NodeFailed
from rigcli.provider_api import ProviderSetup


def _secret() -> str:
    return f"sec-{uuid.uuid4().hex}"


def test_registered_values_are_masked_inside_longer_text_longest_first() -> None:
    short, value = _secret(), _secret()
    longer = value + "-suffix"
    masking.register(value, longer, short)
    assert masking.mask_text(f"a{value}b {longer} {short}") == "a***b *** ***"


def test_a_multi_line_value_is_masked_whole_and_line_by_line_but_not_its_short_lines() -> None:
    body = uuid.uuid4().hex
    value = f"-----BEGIN {body[:6]}-----\n{body}\nxyz\n-----END {body[:6]}-----\n"
    masking.register(value)
    assert masking.mask_text(f"key: {value}") == "key: ***\n"  # whole, the trailing newline kept
    assert masking.mask_text(f"line {body} alone") == "line *** alone"
    assert masking.mask_text("xyz") == "xyz"  # shorter than four characters: not masked, line or not
    assert masking.pieces("  tok-1234\n") == {"tok-1234"}


def test_a_value_ending_in_a_newline_is_masked_where_it_shows_without_it() -> None:
    value = f"{_secret()}\n"
    masking.register(value)
    assert masking.mask_text(f"token={value.strip()}!") == "token=***!"
    masker = masking.StreamMasker()
    shown = masker.feed(f"a {value[:10]}") + masker.feed(f"{value[10:].strip()} b") + masker.flush()
    assert shown == "a *** b"


def test_values_too_short_to_mask_sensibly_are_ignored() -> None:
    masking.register("ab", "   ", "")
    assert masking.mask_text("abab") == "abab"


def test_json_values_are_masked_in_keys_and_values_and_untouched_ones_are_kept() -> None:
    value = _secret()
    masking.register(value)
    document = {"a": [1, {"k": f"x{value}"}], value: True, "same": {"n": None}}
    masked = masking.mask_value(document)
    assert masked == {"a": [1, {"k": "x***"}], "***": True, "same": {"n": None}}
    untouched = {"plain": ["text", 1]}
    assert masking.mask_value(untouched) is untouched


def test_a_stream_masks_a_secret_split_across_chunks_and_flushes_a_harmless_tail() -> None:
    value = _secret()
    masking.register(value)
    stream = masking.StreamMasker()
    shown = stream.feed("out " + value[:7]) + stream.feed(value[7:] + " done\n") + stream.feed(value[:3])
    shown += stream.flush()
    assert shown == "out *** done\n" + value[:3]


def test_making_a_secret_value_or_declaring_secret_registers_it() -> None:
    made = _secret()
    SecretValue(made)
    assert masking.mask_text(made) == "***"
    from_env = _secret()
    os.environ["RIG_MASKING_TEST"] = from_env
    try:
        define_provider("x", token=secret("RIG_MASKING_TEST")).declare_secrets()
    finally:
        del os.environ["RIG_MASKING_TEST"]
    assert masking.mask_text(from_env) == "***"


def test_a_provider_marks_a_value_secret_through_its_setup() -> None:
    minted = _secret()
    setup = ProviderSetup("x", {}, None, None, None, "", "")  # type: ignore[arg-type]  # only mark_secret is used
    setup.mark_secret(minted)
    assert masking.mask_text(f"token {minted}") == "token ***"


def test_the_event_bus_masks_every_event_and_command_output_as_a_stream() -> None:
    value = _secret()
    masking.register(value)
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)
    bus.emit(CommandOutput(node_path="n", command_id="c", stream="stdout", data="x" * 10 + value[:5]))
    bus.emit(CommandOutput(node_path="n", command_id="c", stream="stdout", data=value[5:] + "\n"))
    bus.emit(CommandOutput(node_path="n", command_id="c", stream="stderr", data="tail " + value[:4]))
    bus.emit(CommandCompleted(node_path="n", command_id="c", exit_code=0))
    bus.emit(LogOutput(node_path="n", stream="info", data=f"[{value}]"))
    bus.emit(NodeFailed(node_path="n", error=f"failed: {value}", run_id="r", extra={"detail": value}))
    shown = [event.to_json() for event in seen]
    assert value not in repr(shown)
    stdout = "".join(str(item["data"]) for item in shown if item.get("stream") == "stdout")
    assert stdout == "x" * 10 + "***\n"
    assert [item["type"] for item in shown][-4:] == ["command.output", "command.completed", "log.output", "node.failed"]
    assert shown[-1]["error"] == "failed: ***" and shown[-1]["detail"] == "***"


def test_events_pass_through_unchanged_while_nothing_is_registered() -> None:
    saved = masking.registered()
    masking.reset()
    try:
        bus, seen = EventBus(), []
        bus.subscribe(seen.append)
        event: Event = LogOutput(node_path="n", stream="info", data="plain")
        bus.emit(event)
        assert seen == [event] and seen[0] is event
    finally:
        masking.register(*saved)
