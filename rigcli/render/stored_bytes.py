"""Stored output copied out as bytes: as stored where colour is wanted, cleaned of it elsewhere."""

from __future__ import annotations

from collections.abc import Callable


class StoredBytes:
    """Hands pieces of stored UTF-8 (masked and sanitized when they were stored) to ``write``; where
    no colour is wanted, a piece with colour is cleaned of it, whole lines at a time (a sequence cut
    between two pieces is cleaned whole).

    Imports nothing at load: ``rig logs TASK`` answered from the cache (cli/commands/history.py) writes
    through it straight to stdout's buffer, LogWriter (render/history.py) past the output relay.
    """

    def __init__(self, write: Callable[[bytes], object], *, colour: bool) -> None:
        self._write = write
        self.colour = colour
        self.held = b""  # the end of a piece being cleaned of colour, up to its last whole line

    def write(self, data: bytes, *, ends_chunk: bool) -> None:
        colour_in_it = b"\x1b" in data or b"\x9b" in data or data.endswith(b"\xc2")  # ESC, or CSI (C2 9B)
        if self.held or (not self.colour and colour_in_it):
            from rigcli.sanitize import sanitize

            data, self.held = self.held + data, b""
            if not ends_chunk:
                cut = data.rfind(b"\n") + 1
                data, self.held = data[:cut], data[cut:]
            data = sanitize(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if data:
            self._write(data)


__all__ = ["StoredBytes"]
