"""Control sequences are stripped from untrusted text; colour survives only where asked."""

from __future__ import annotations

import pytest

from rigcli.sanitize import sanitize


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("\x1b]0;title\x07after", "after"),  # OSC window title, BEL-terminated
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC hyperlink, ST-terminated
        ("\x1b[2J\x1b[H\x1b[?25lscreen", "screen"),  # clear, home, hide cursor
        ("bell\x07 back\x08space\rreturn", "bell backspacereturn"),
        ("\x9b2Jc1", "c1"),  # 8-bit CSI
        ("\x1bPdcs payload\x1b\\text", "text"),
        ("tab\tand newline\n", "tab\tand newline\n"),
        ("ünïcödé ✓ 日本", "ünïcödé ✓ 日本"),
    ],
)
def test_control_sequences_are_removed(raw: str, plain: str) -> None:
    assert sanitize(raw) == plain
    assert sanitize(raw, colour=True) == plain


def test_colour_is_kept_only_when_asked() -> None:
    text = "\x1b[1;31mred\x1b[0m \x1b]0;t\x07"
    assert sanitize(text) == "red "
    assert sanitize(text, colour=True) == "\x1b[1;31mred\x1b[0m "


# A lone ESC takes the character after it with it (an escape sequence); those come whole here.
BARE = [*range(0x00, 0x09), *range(0x0B, 0x1B), *range(0x1C, 0x20), 0x7F]


@pytest.mark.parametrize("control", [*map(chr, BARE), "\x1b[2J", "\x1b]0;t\x07"])
def test_a_large_ascii_chunk_is_checked_for_every_control_anywhere(control: str) -> None:
    lines = ("a" * 99 + "\n") * 700  # 70 KB: past the size where the membership scan takes over
    for at in (0, len(lines) // 2, len(lines)):
        raw = lines[:at] + control + lines[at:]
        assert sanitize(raw) == lines
        assert sanitize(raw, colour=True) == lines


def test_a_large_clean_chunk_comes_back_as_it_is() -> None:
    lines = ("a\tb" * 33 + "\n") * 700
    assert sanitize(lines) is lines
    coloured = lines + "\x1b[31mred\x1b[0m\n"
    assert sanitize(coloured, colour=True) == coloured
    assert sanitize(coloured) == lines + "red\n"
