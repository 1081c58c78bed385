"""rig logs writes stored output as bytes, piece by piece: cuts between pieces never show."""

from __future__ import annotations

import io
import itertools

import pytest

from rigcli.engine.history_views import LogUpdate, RunLog
from rigcli.records import NodeRun, OutputPiece
from rigcli.render.history import LogWriter
from rigcli.sanitize import sanitize

RUN = NodeRun(
    id="0123456789abcdef",
    workflow="web",
    node_path="build",
    node_name="build",
    node_kind="task",
    node_key="key",
    provider_fingerprint="providers",
    upstream_run_ids=[],
    output=None,
    artifacts=[],
    status="succeeded",
    invalidated=False,
    created_at="2026-12-01T00:00:00+00:00",
    finished_at="2026-12-01T00:00:01+00:00",
    error=None,
    pid=None,
    host=None,
    apply_id=None,
    metadata={},
)
LOG = RunLog(RUN, "build", "local", "succeeded")
# An escape sequence, a two-byte character and a C1 CSI (U+009B, C2 9B in UTF-8), each cut below.
TEXT = "plain ünï line\nred \x1b[31mhere\x1b[0m and é\ncsi \x9b1mbold\x9b0m end\nlast plain line\n"


def _written(monkeypatch: pytest.MonkeyPatch, cuts: list[int], text: str = TEXT) -> bytes:
    """What LogWriter puts on a (non-terminal) stdout given ``text``'s bytes cut at ``cuts``."""
    sink = io.BytesIO()
    stdout = io.TextIOWrapper(sink, encoding="utf-8", write_through=True)
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.delenv("NO_COLOR", raising=False)
    data = text.encode()
    bounds = [0, *cuts, len(data)]
    writer = LogWriter(headers=False)
    for start, end in itertools.pairwise(bounds):
        piece = OutputPiece(0, data[start:end], end == len(data))
        writer.write(LogUpdate(LOG, [], False, False, (piece,)))
    writer.write(LogUpdate(LOG, [], True))
    stdout.flush()
    return sink.getvalue()


def _cut_inside(needle: str, offset: int, text: str = TEXT) -> int:
    return text.encode().index(needle.encode()) + offset


@pytest.mark.parametrize(
    "cuts",
    [
        [],
        [_cut_inside("\x1b[31m", 2)],  # inside the escape sequence
        [_cut_inside("ü", 1)],  # between the two bytes of ü (no colour in that piece)
        [_cut_inside("\x9b1m", 1)],  # between C2 and 9B
        [_cut_inside("é", 1), _cut_inside("\x9b0m", 0), _cut_inside("last", 3)],
    ],
)
def test_pieces_cut_anywhere_come_out_as_the_whole_text_without_colour(
    monkeypatch: pytest.MonkeyPatch, cuts: list[int]
) -> None:
    written = _written(monkeypatch, cuts)
    assert written.decode("utf-8") == sanitize(TEXT)
    assert b"\x1b" not in written and b"\xc2\x9b" not in written


def test_pieces_with_no_colour_are_copied_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = "ünï plain\n" * 10
    assert _written(monkeypatch, [_cut_inside("ü", 1, plain), 25], plain) == plain.encode()
