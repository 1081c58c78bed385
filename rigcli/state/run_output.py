"""Each node run's stored output (``node_run_output``): chunks of text written as the run goes.

The engine's recorder (engine/runlog.py) decides what is kept: it batches a run's output and
hands each batch over here (``append_output``, a short write transaction of its own), and the
last one to ``finish_run``, which writes it in the run's finishing transaction. A batch holds
new chunks, the numbers (``seq``) of older chunks to delete — the oldest of the kept tail, when
a run prints more than its cap — and the marker chunk that says how much was dropped, written
at the place the middle was cut (a ``seq`` the recorder reserved for it).

Chunks are read back in ``seq`` order; a reader following a run in progress asks for the
chunks after the last one it saw (``output_chunks(after=...)``).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
from collections.abc import Iterable, Iterator

from rigcli.records import OutputChunk, OutputPiece
from rigcli.speed.records import lazy_dataclass
from rigcli.state.database import StateDatabase
from rigcli.state.dialect import Connection, placeholders
from rigcli.state.rows import Columns

OUTPUT = Columns(OutputChunk, "node_run_output", as_json=("streams",))
_PAGE = 64  # chunks fetched at a time: a 50 MB output is read without holding it all twice
PIECE_BYTES = 4 * 1024 * 1024  # the most of one chunk's bytes read at once (a chunk can be tens of MiB)
_CHUNK = 500  # ids per IN (...), below SQLite's old bound-parameter limit


@lazy_dataclass(frozen=True)
class OutputBatch:
    """What one flush of a run's output writes: new chunks, old chunks dropped, and the marker."""

    chunks: tuple[OutputChunk, ...] = ()
    dropped: tuple[int, ...] = ()  # seqs of stored chunks to delete (the oldest of the tail)
    marker: OutputChunk | None = None  # written, or rewritten, at the seq reserved for it

    def __bool__(self) -> bool:
        return bool(self.chunks or self.dropped or self.marker)


def write_output(db: Connection, run_id: str, batch: OutputBatch) -> None:
    """``batch`` of run ``run_id``'s output, inside the caller's write transaction."""
    if batch.dropped:
        for start in range(0, len(batch.dropped), _CHUNK):
            seqs = batch.dropped[start : start + _CHUNK]
            db.execute(
                f"DELETE FROM node_run_output WHERE run_id = ? AND seq IN ({placeholders(len(seqs))})",
                (run_id, *seqs),
            )
    if batch.chunks:
        db.executemany(OUTPUT.insert(), [OUTPUT.params(chunk.to_json()) for chunk in batch.chunks])
    if batch.marker is not None:
        db.execute(
            f"{OUTPUT.insert()} ON CONFLICT(run_id, seq) DO UPDATE SET "
            "streams_json = excluded.streams_json, data = excluded.data",
            OUTPUT.params(batch.marker.to_json()),
        )


class RunOutput(StateDatabase):
    def append_output(self, run_id: str, batch: OutputBatch) -> None:
        """Write a batch of a running run's output in a short transaction of its own."""
        if batch:
            with self._write() as db:
                write_output(db, run_id, batch)

    def output_chunks(self, run_id: str, *, after: int = -1) -> Iterator[OutputChunk]:
        """The run's stored chunks with ``seq`` above ``after``, in order, read a page at a time
        (a 50 MB output is never held whole, and no read spans the consumer's writes)."""
        while True:
            with self._read() as db:
                page = OUTPUT.all(
                    db.execute(
                        f"SELECT {OUTPUT.select} FROM node_run_output WHERE run_id = ? AND seq > ? "
                        f"ORDER BY seq LIMIT {_PAGE}",
                        (run_id, after),
                    )
                )
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].seq

    def output_pieces(self, run_id: str, *, after: int = -1) -> Iterator[OutputPiece]:
        """The run's stored chunks with ``seq`` above ``after`` as their UTF-8 bytes, in order, in
        pieces of at most ``PIECE_BYTES``: what is held at once stays bounded however long a chunk
        is, the bytes go out as stored (no decoding to text and encoding back), and no read spans
        the consumer's writes."""
        while True:
            with self._read() as db:
                query = f"SELECT seq FROM node_run_output WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT {_PAGE}"
                seqs = [int(row[0]) for row in db.execute(query, (run_id, after))]
            for seq in seqs:
                start = 0
                while True:
                    data = self._piece(run_id, seq, start)
                    ends = data is None or len(data) < PIECE_BYTES
                    yield OutputPiece(seq, data or b"", ends)
                    if data is None or ends:
                        break
                    start += len(data)
            if len(seqs) < _PAGE:
                return
            after = seqs[-1]

    def _piece(self, run_id: str, seq: int, start: int) -> bytes | None:
        """Up to ``PIECE_BYTES`` of a chunk's UTF-8 from byte ``start``; None once the chunk is gone
        (the tail of a run being followed moved on)."""
        where = "FROM node_run_output WHERE run_id = ? AND seq = ?"
        with self._read() as db:
            blobopen = getattr(db, "blobopen", None)  # SQLite on Python 3.11+: read in place, no copy of the rest
            if blobopen is not None:
                row = db.execute(f"SELECT rowid {where}", (run_id, seq)).fetchone()
                if row is None:
                    return None
                try:
                    with blobopen("node_run_output", "data", row[0], readonly=True) as blob:
                        blob.seek(start)
                        return bytes(blob.read(PIECE_BYTES))
                except sqlite3.OperationalError:  # deleted since the row was found
                    return None
            # Elsewhere the database hands over the piece, cut from the whole value.
            query = f"SELECT {self.dialect.text_bytes('data')} {where}"
            found = db.execute(query, (start + 1, PIECE_BYTES, run_id, seq)).fetchone()
            return None if found is None else bytes(found[0] or b"")

    def delete_output(self, run_ids: Iterable[str]) -> int:
        """Forget these runs' stored output; return how many chunks were deleted."""
        ids = sorted(set(run_ids))
        deleted = 0
        with self._write() as db:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                cursor = db.execute(f"DELETE FROM node_run_output WHERE run_id IN ({placeholders(len(chunk))})", chunk)
                deleted += cursor.rowcount
        return deleted


__all__ = ["OUTPUT", "PIECE_BYTES", "OutputBatch", "RunOutput", "write_output"]
