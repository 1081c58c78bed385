"""One running node's output on its way to the state: a bounded head and tail, batched into chunks.

A run keeps at most ``cap`` characters: the first quarter as it comes, then the newest three
quarters, the middle dropped — from memory before it is ever written, and from the stored tail
as newer output arrives — with one marker line where it was cut saying how much is gone. Memory
stays bounded by the cap too. ``take`` hands over what to write next (state/run_output.py).
"""

from __future__ import annotations

import threading
from collections import deque

from rigcli.jsonutil import JsonValue
from rigcli.records import OutputChunk
from rigcli.sanitize import sanitize
from rigcli.state.api import StateStore
from rigcli.state.run_output import OutputBatch

CAP_VARIABLE = "RIG_LOG_CAP"
FLUSH_CHARS = 256 * 1024  # the head of a run's output waiting to be written: write it now
PARTIAL_LIMIT = 64 * 1024  # an unterminated command line longer than this is kept in pieces
MARKER = "rig"  # the stream of the line that says what was dropped


def _storable(text: str) -> str:
    """``text`` as stored: no control sequences but colour, and valid UTF-8 for the database."""
    text = sanitize(text, colour=True)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from a handler's print()
            text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def dropped_line(chars: int) -> str:
    """The marker line where the middle of a run's output was cut."""
    size = f"{chars / 1024**2:.1f} MiB" if chars >= 1024**2 else f"{chars / 1024:.1f} KiB"
    return f"… {size} of output dropped here (rig keeps the first quarter and the last three of {CAP_VARIABLE}) …\n"


class RunBuffer:
    """One running node's output waiting to be written, and what of it is already stored."""

    def __init__(self, run_id: str, store: StateStore, cap: int) -> None:
        self.run_id = run_id
        self.store = store
        self.head_left = cap // 4
        self.tail_cap = cap - cap // 4
        self.head: list[tuple[str, str]] = []
        self.head_size = 0
        self.tail: deque[tuple[str, str]] = deque()
        self.tail_size = 0
        self.dropped = 0  # characters not kept, in memory or deleted from the stored tail
        self.marked = 0  # what the stored marker says
        self.partial: dict[tuple[str, str], tuple[str, str]] = {}  # (command, stream) -> (stream, text)
        self.next_seq = 0
        self.marker_seq: int | None = None
        self.stored_tail: deque[tuple[int, int]] = deque()  # (seq, size) of the tail's stored chunks
        self.stored_tail_size = 0
        self.lock = threading.Lock()  # the pending output
        self.writing = threading.Lock()  # held while a batch of this run is written: batches stay in order

    def add(self, stream: str, text: str) -> None:
        """Whole lines of one stream (each ending in a newline)."""
        if not text:
            return
        with self.lock:
            self._add(stream, text)

    def _add(self, stream: str, text: str) -> None:
        if self.head_left > 0:
            if len(text) <= self.head_left:
                self.head.append((stream, text))
                self.head_size += len(text)
                self.head_left -= len(text)
                return
            cut = text.rfind("\n", 0, self.head_left) + 1
            if cut:
                self.head.append((stream, text[:cut]))
                self.head_size += cut
                text = text[cut:]
            self.head_left = 0
        self.tail.append((stream, text))
        self.tail_size += len(text)
        while self.tail_size > self.tail_cap and self.tail:
            oldest_stream, oldest = self.tail[0]
            excess = self.tail_size - self.tail_cap
            cut = len(oldest) if len(oldest) <= excess else oldest.find("\n", excess - 1) + 1 or len(oldest)
            if cut >= len(oldest):
                self.tail.popleft()
            else:
                self.tail[0] = (oldest_stream, oldest[cut:])
            self.tail_size -= cut
            self.dropped += cut

    def command_output(self, key: tuple[str, str], stream: str, data: str) -> None:
        """A chunk of a command's stream: its whole lines now, an unterminated end with the next chunk."""
        with self.lock:
            held = self.partial.pop(key, None)
            text = held[1] + data if held is not None else data
            cut = text.rfind("\n") + 1
            if cut < len(text) and len(text) - cut < PARTIAL_LIMIT:
                self.partial[key] = (stream, text[cut:])
                text = text[:cut]
            elif cut < len(text):
                text += "\n"
            if text:
                self._add(stream, text)

    def end_command(self, command_id: str) -> None:
        with self.lock:
            for key in [key for key in self.partial if key[0] == command_id]:
                stream, text = self.partial.pop(key)
                self._add(stream, text + "\n")

    @property
    def urgent(self) -> bool:
        """Enough of the head waits to be written now (the tail waits for the timer: a run printing
        far beyond its cap must not write all of it only to delete it again)."""
        return self.head_size >= FLUSH_CHARS

    def take(self, *, final: bool = False) -> OutputBatch:
        """What to write now; ``final``: everything, unterminated lines too (the run is over)."""
        pending: list[tuple[int, list[tuple[str, str]]]] = []  # (seq, pieces): made into chunks unlocked
        with self.lock:
            if final:
                for stream, text in self.partial.values():
                    self._add(stream, text + "\n")
                self.partial.clear()
            if self.head:
                pending.append((self._seq(), self.head))
                self.head, self.head_size = [], 0
            marker = None
            if self.head_left == 0 and self.marker_seq is None:
                # Where the middle will be cut, between head and tail: an empty chunk until it is, so
                # that a reader following the run sees no gap where nothing was dropped.
                self.marker_seq = self._seq()
                marker = OutputChunk(self.run_id, self.marker_seq, [], "")
            gone: list[int] = []
            if self.tail:
                while self.stored_tail and self.stored_tail_size + self.tail_size > self.tail_cap:
                    seq, size = self.stored_tail.popleft()
                    gone.append(seq)
                    self.stored_tail_size -= size
                    self.dropped += size
                seq = self._seq()
                pending.append((seq, list(self.tail)))
                self.stored_tail.append((seq, self.tail_size))
                self.stored_tail_size += self.tail_size
                self.tail.clear()
                self.tail_size = 0
            if self.dropped != self.marked and self.marker_seq is not None:
                text = dropped_line(self.dropped)
                marker = OutputChunk(self.run_id, self.marker_seq, [[MARKER, len(text)]], text)
                self.marked = self.dropped
        # Sanitizing a few MiB takes a moment: not while the handler's events wait for the lock.
        chunks = tuple(self._chunk(seq, pieces) for seq, pieces in pending)
        return OutputBatch(chunks, tuple(gone), marker)

    def _seq(self) -> int:
        seq, self.next_seq = self.next_seq, self.next_seq + 1
        return seq

    def _chunk(self, seq: int, pieces: list[tuple[str, str]]) -> OutputChunk:
        runs: list[tuple[str, int]] = []  # consecutive pieces of one stream are one stretch
        texts: list[str] = []
        for stream, raw in pieces:
            text = _storable(raw)
            if runs and runs[-1][0] == stream:
                runs[-1] = (stream, runs[-1][1] + len(text))
            else:
                runs.append((stream, len(text)))
            texts.append(text)
        streams: list[JsonValue] = [[stream, length] for stream, length in runs]
        return OutputChunk(self.run_id, seq, streams, "".join(texts))


__all__ = ["CAP_VARIABLE", "MARKER", "RunBuffer", "dropped_line"]
