"""The pieces `rig ls`'s remembered listing reads and writes with instead of the standard library's heavier
modules each give exactly what those modules give; and its probe keeps the full way's bound."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import pytest

from providers.docker.images import full_image_id
from providers.docker.rawhttp import query_string
from rigcli.engine import direct_probes, liveness
from rigcli.errors import describe_exception
from rigcli.records import VERY_OLD, parse_timestamp, timestamp
from rigcli.speed.entry_points import _parsed, _plain
from rigcli.speed.json_lite import dumps, loads, loads_bytes, string
from rigcli.speed.timestamps import stored_epoch

DOCUMENTS = [
    "{}",
    "[]",
    ' {"a": [1, 2.5, -3e5, true, false, null, "x\\u00e9\\n"]} ',
    '"s"',
    "NaN",
    "[Infinity, -Infinity, 1e400]",
    "12345678901234567890",
    '{"a": {"b": [{"c": "d"}]}, "a": 2}',
]
NOT_JSON = ["", "{", "{} x", "[1,]", '"\x01"', "nul", "\ufeff{}"]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_json_lite_reads_what_json_reads(text: str) -> None:
    assert repr(loads(text)) == repr(json.loads(text))
    assert repr(loads_bytes(text.encode())) == repr(json.loads(text.encode()))


@pytest.mark.parametrize("text", NOT_JSON)
def test_json_lite_raises_what_json_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as raised:
        loads(text)
    assert str(raised.value) == str(expected.value)


def test_json_lite_reads_bytes_in_any_encoding_json_detects() -> None:
    for data in ("\ufeff{}".encode(), '{"é": 1}'.encode("utf-16"), b'{"a": 1}'):
        assert loads_bytes(data) == json.loads(data)


def test_json_lite_writes_a_document_as_json_dumps_does() -> None:
    rng = random.Random(5)
    documents: list[Any] = [json.loads(text) for text in DOCUMENTS]
    documents += [{"Cmd": ["sh", "-c", "true"], "Env": ["A=é"], "Tty": False}, {1: "a", 2.5: "b", None: "c"}]
    for _ in range(300):
        documents.append(
            {"".join(chr(rng.randrange(0, 0x2FF)) for _ in range(3)): [rng.random(), rng.randrange(-9, 9)]}
        )
    for document in documents:
        assert dumps(document) == json.dumps(document)
    for value in ({"a": object()}, {(1, 2): "tuple key"}):
        with pytest.raises(TypeError) as expected:
            json.dumps(value)
        with pytest.raises(TypeError) as raised:
            dumps(value)
        assert str(raised.value) == str(expected.value)
    shared = [1]
    assert dumps([shared, shared]) == "[[1], [1]]"  # the same list twice is no circle


def test_json_lite_writes_a_string_as_json_dumps_does() -> None:
    for text in ["rig.project=/tmp/x y", 'é"\\\x01\u2028\U0001f600', ""]:
        assert string(text) == json.dumps(text)


def test_a_stored_timestamp_reads_as_the_records_read_it() -> None:
    rng = random.Random(7)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    for _ in range(5000):
        moment = epoch + timedelta(microseconds=rng.randrange(0, 300 * 365 * 86400 * 10**6))
        text = timestamp(moment)
        assert stored_epoch(text) == pytest.approx(parse_timestamp(text).timestamp(), abs=1e-6)
    for other in ["2024-02-30T00:00:00.000000+00:00", "2026-05-10T00:00:00Z", "", "2026-05-10T25:00:00.000000+00:00"]:
        assert stored_epoch(other) is None  # then the records read it (or say it is unreadable)
    assert parse_timestamp("2024-02-30T00:00:00.000000+00:00") == VERY_OLD


def test_a_query_string_is_what_urlencode_makes() -> None:
    rng = random.Random(11)
    cases: list[dict[str, Any]] = [{"all": "true", "filters": json.dumps({"label": ["rig.project=/tmp/é ~+&=%"]})}]
    for _ in range(500):
        key = "".join(chr(rng.randrange(0, 0x300)) for _ in range(4))
        cases.append({key: "".join(chr(rng.randrange(0, 0x1100)) for _ in range(8)), "n": rng.randrange(99)})
    for params in cases:
        assert query_string(params) == urlencode(params)


def test_a_bare_image_id_is_prefixed_as_before() -> None:
    bare = "a" * 64
    assert full_image_id(bare) == f"sha256:{bare}"
    assert full_image_id("A" * 64) == "A" * 64
    assert full_image_id("a" * 63) == "a" * 63
    assert full_image_id(f"sha256:{bare}") == f"sha256:{bare}"


@pytest.mark.parametrize("value", ["providers.docker:plugin", "a.b", "a:b.c", "a:", "a: b", "a [x]", "é:x", ":x"])
def test_an_entry_point_value_is_read_as_its_grammar_reads_it(value: str) -> None:
    try:
        expected: tuple[str, str] | None = _parsed(value)
    except ValueError:
        expected = None
    assert _plain(value) in (None, expected)


class _Silent:
    """A daemon that never answers a probe."""

    def checks(self) -> Sequence[Mapping[str, Any]]:
        return []

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool | None:
        return True

    def probe(self, project_dir: str, resources: Sequence[Any]) -> Mapping[str, tuple[str, str]]:
        time.sleep(60)
        return {}

    def close(self) -> None:
        return None


class _Failing(_Silent):
    def probe(self, project_dir: str, resources: Sequence[Any]) -> Mapping[str, tuple[str, str]]:
        raise OSError("connection refused")


def _record(record_id: str, effect_id: str) -> dict[str, object]:
    resource = {"effect_id": effect_id, "provider_id": "docker", "kind": "container", "resource": {}}
    return {"id": record_id, "status": "ready", "resources": [resource]}


def test_a_daemon_that_never_answers_is_unknown_after_the_engines_bound() -> None:
    assert direct_probes.PROBE_SECONDS == liveness.PROBE_SECONDS
    records = [_record("w1", "e1"), _record("w2", "e2")]
    providers = [_Silent(), _Failing()]
    probes = direct_probes.DirectProbes.make(providers, ["docker", "podman"], {0, 1}, "/project", [])  # type: ignore[arg-type]
    assert probes is not None
    silent = direct_probes._Probe(providers[0], "/project", [{"id": "e1", "kind": "container", "resource": {}}])  # type: ignore[arg-type]
    failing = direct_probes._Probe(providers[1], "/project", [{"id": "e2", "kind": "container", "resource": {}}])  # type: ignore[arg-type]
    probes = direct_probes.DirectProbes([silent, failing])
    started = time.monotonic()
    probes.start()
    live = probes.answers(records)
    assert time.monotonic() - started < direct_probes.PROBE_SECONDS + 1
    refused = describe_exception(OSError("connection refused"))  # as engine/liveness.py words it
    assert live == {"w1": ("unknown", "no answer within 2s"), "w2": ("unknown", refused)}


def test_each_provider_is_probed_through_its_one_definition_among_the_workflows_scopes() -> None:
    records = [_record("w1", "e1")]
    providers = [_Silent(), _Failing()]
    # docker has two definitions in scope: which one would answer is not known, so no direct probe
    assert direct_probes.DirectProbes.make(providers, ["docker", "docker"], {0, 1}, "/p", records) is None  # type: ignore[arg-type]
    # one definition of it in scope: that one
    assert direct_probes.DirectProbes.make(providers, ["docker", "docker"], {1}, "/p", records) is not None  # type: ignore[arg-type]
    # none in scope: the engine asks a bare one
    assert direct_probes.DirectProbes.make(providers, ["podman", "local"], {0, 1}, "/p", records) is None  # type: ignore[arg-type]
