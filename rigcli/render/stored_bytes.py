"""Stored output copied to stdout as bytes: as stored on a terminal that wants colour, cleaned of it elsewhere."""

from __future__ import annotations

from typing import TextIO

from rigcli.render.console import no_color
from rigcli.render.plain import is_terminal
from rigcli.sanitize import sanitize
from rigcli.streams import real_stdout, write_bytes


class StoredBytes:
    """Writes pieces of stored UTF-8 (already masked and sanitized when stored) to stdout; a piece
    with colour going where none is wanted is cleaned of it, whole lines at a time (a sequence cut
    between two pieces is cleaned whole)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream: TextIO = stream or real_stdout()
        self.colour = is_terminal(self.stream) and not no_color()
        self.held = b""  # the end of a piece being cleaned of colour, up to its last whole line

    def write(self, data: bytes, *, ends_chunk: bool) -> None:
        colour_in_it = b"\x1b" in data or b"\x9b" in data or data.endswith(b"\xc2")  # ESC, or CSI (C2 9B)
        if self.held or (not self.colour and colour_in_it):
            data, self.held = self.held + data, b""
            if not ends_chunk:
                cut = data.rfind(b"\n") + 1
                data, self.held = data[:cut], data[cut:]
            data = sanitize(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if data:
            write_bytes(self.stream, data)


__all__ = ["StoredBytes"]
