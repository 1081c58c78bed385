"""Bounded buffers, line chunking, redaction and Docker stream framing, without processes."""

from __future__ import annotations

import struct

from providers.docker.client import negotiate
from providers.docker.execution import FrameDecoder
from rigcli.authoring.values import SecretValue
from rigcli.provider_kit.commands import CHUNK_LIMIT, LineChunker, Redactor, TailBuffer


def test_tail_buffer_keeps_the_last_bytes_and_counts_the_rest() -> None:
    buffer = TailBuffer(limit=10)
    for piece in (b"0123", b"4567", b"89ab", b"cdef"):
        buffer.write(piece)
    assert buffer.getvalue() == b"6789abcdef"
    assert buffer.dropped == 6
    buffer.write(b"x" * 25)
    assert buffer.getvalue() == b"x" * 10
    assert buffer.dropped == 6 + 10 + 15


def test_line_chunker_emits_whole_lines_and_keeps_partial_ones() -> None:
    chunker = LineChunker()
    assert chunker.feed(b"one\ntw") == ["one\n"]
    assert chunker.feed(b"o\nthr") == ["two\n"]
    assert chunker.flush() == ["thr"]
    assert chunker.flush() == []


def test_line_chunker_keeps_multibyte_characters_whole_across_reads() -> None:
    chunker = LineChunker()
    snowman = "☃\n".encode()
    assert chunker.feed(snowman[:1]) == []
    assert chunker.feed(snowman[1:]) == ["☃\n"]


def test_line_chunker_decodes_any_cut_of_the_bytes_as_decoding_them_whole_would() -> None:
    # Invalid UTF-8, a character split inside a held partial line and across reads, a long line.
    data = "ok ☃\n".encode() + b"bad \xff\xfe end\n" + "half ☃".encode() + b"\xe2\x98\n" + b"x" * 70_000 + b"\n"
    expected = data.decode("utf-8", "replace")
    for size in (1, 2, 3, 5, 7, 4096, 65_536):
        chunker = LineChunker()
        chunks = [text for start in range(0, len(data), size) for text in chunker.feed(data[start : start + size])]
        assert "".join([*chunks, *chunker.flush()]) == expected, size


def test_line_chunker_hands_on_a_long_line_without_waiting_for_its_newline() -> None:
    chunker = LineChunker()
    pieces = chunker.feed(b"y" * (CHUNK_LIMIT + 5))
    assert [len(piece) for piece in pieces] == [CHUNK_LIMIT + 5]
    assert chunker.feed(b"z" * 10) == []  # below the limit: waits for a newline
    assert chunker.flush() == ["z" * 10]


def test_redactor_masks_secret_values_found_anywhere_in_config() -> None:
    redact = Redactor.from_values({"token": SecretValue("hunter2"), "nested": [SecretValue("s3")]}, {"plain": "x"})
    assert redact("login hunter2 with s3 and x") == "login *** with *** and x"


def _frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + struct.pack(">I", len(payload)) + payload


def test_frame_decoder_splits_streams_even_when_headers_arrive_in_pieces() -> None:
    raw = _frame(1, b"out-1\n") + _frame(2, b"err-1\n") + _frame(1, b"out-2\n")
    decoder = FrameDecoder()
    decoded = [item for index in range(len(raw)) for item in decoder.feed(raw[index : index + 1])]
    by_stream: dict[str, bytes] = {"stdout": b"", "stderr": b""}
    order = []
    for stream, payload in decoded:
        by_stream[stream] += payload
        if not order or order[-1] != stream:
            order.append(stream)
    assert by_stream == {"stdout": b"out-1\nout-2\n", "stderr": b"err-1\n"}
    assert order == ["stdout", "stderr", "stdout"]


def test_frame_decoder_hands_on_large_frames_without_waiting_for_the_whole_payload() -> None:
    decoder = FrameDecoder()
    header = _frame(1, b"x" * 100_000)[:8]
    assert list(decoder.feed(header + b"x" * 10)) == [("stdout", b"x" * 10)]


def test_api_version_is_the_lower_of_the_servers_and_ours() -> None:
    assert negotiate("1.40", "1.41") == "1.40"
    assert negotiate("1.45", "1.41") == "1.41"
    assert negotiate("1.9", "1.41") == "1.9"  # numeric, not string, comparison
    assert negotiate(None, "1.41") == "1.41"
