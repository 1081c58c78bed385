"""Docker's multiplexed stream of an exec without a terminal: stdout and stderr in framed chunks."""

from __future__ import annotations

import struct
from collections.abc import Iterator

_STREAMS = {1: "stdout", 2: "stderr"}


class FrameDecoder:
    """Splits Docker's multiplexed stream (8-byte headers: stream, 0, 0, 0, uint32 BE length).

    Payloads are handed on as they arrive, never held whole, so a huge frame costs no memory.
    """

    def __init__(self) -> None:
        self._header = b""
        self._stream = 0
        self._remaining = 0

    def feed(self, data: bytes) -> Iterator[tuple[str, bytes]]:
        view = memoryview(data)
        while view:
            if self._remaining == 0:
                need = 8 - len(self._header)
                self._header += bytes(view[:need])
                view = view[need:]
                if len(self._header) < 8:
                    return
                self._stream, self._remaining = self._header[0], struct.unpack(">I", self._header[4:8])[0]
                self._header = b""
                continue
            take = bytes(view[: self._remaining])
            view = view[len(take) :]
            self._remaining -= len(take)
            yield _STREAMS.get(self._stream, "stdout"), take


__all__ = ["FrameDecoder"]
