"""Facts worked out from a source file's text, kept on disk while the file keeps its ``stat``.

Fingerprinting a handler (``fingerprint/codeinfo.py``) finds its ``def`` in the parsed source and
digests it: importing ``ast`` and ``tokenize``, reading, parsing and walking the file cost a cached
plan of a one-file config ~25M instructions (~8 %), on every run, for the same answer while the
file is unchanged. What such a computation returns (plain data: tuples, strings, numbers) is kept
here under the file's path and a key the caller picks (what else the answer depends on),
stamped with the file's ``stat`` (mtime and ctime in ns, size, inode); a
stamp that no longer matches is not used. Kept in ``$RIG_HOME/cache/file-facts/`` with
``marshal``, one file per rig version and interpreter (the caller names it), written when the
process ends if something new was worked out; a missing, unreadable or foreign file only means
working it out again.
"""

from __future__ import annotations

import os


def file_stamp(path: str) -> list[int] | None:
    """What says a file is as it was: mtime and ctime in ns, size, inode; None when it is not there."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    # ctime too: rsync -t, tar or `touch -r` can put an old mtime back on new bytes of the same
    # size, but nothing sets the change time back.
    return [found.st_mtime_ns, found.st_ctime_ns, found.st_size, found.st_ino]


MAX_KEPT = 4_000  # facts of files long gone would pile up: past this, start afresh

_place: str | None = None
_kept: dict[str, tuple[list[int], object]] | None = None
_write_at_exit = False


def keep_in(path: str) -> None:
    """Keep facts in the file at ``path`` from now on in this process."""
    global _place, _kept
    if _place != path:
        _place, _kept = path, None


def _load() -> dict[str, tuple[list[int], object]]:
    global _kept
    if _kept is None:
        _kept = {}
        if _place is not None:
            import marshal

            try:
                with open(_place, "rb") as handle:
                    found = marshal.loads(handle.read())
            except (OSError, EOFError, ValueError, TypeError):  # what marshal raises for a file it did not write
                found = None
            if isinstance(found, dict):
                _kept = found
    return _kept


def recall(path: str, key: str) -> object:
    """What was kept for ``path`` under ``key`` while the file is as it was then; else None."""
    if _place is None:
        return None
    entry = _load().get(f"{path}\0{key}")
    if not isinstance(entry, tuple) or len(entry) != 2 or entry[0] != file_stamp(path):
        return None
    return entry[1]


def remember(path: str, key: str, fact: object, *, stamp: list[int] | None) -> None:
    """Keep ``fact`` (marshal-able) for ``path`` under ``key``; ``stamp`` is ``stamp_of(path)`` taken
    before the file was read, so a file changed meanwhile is not kept under its new stamp."""
    global _write_at_exit
    if _place is None or stamp is None or stamp != file_stamp(path):
        return
    _load()[f"{path}\0{key}"] = (stamp, fact)
    if not _write_at_exit:
        import atexit

        atexit.register(_write)
        _write_at_exit = True


def stamp_of(path: str) -> list[int] | None:
    """The file's stamp now (None when it cannot be read): take it before reading the file."""
    return file_stamp(path) if _place is not None else None


def _write() -> None:
    """Write what this process kept (atomically: a reader sees one whole file)."""
    if _place is None or _kept is None:
        return
    import contextlib
    import marshal

    kept = _kept if len(_kept) <= MAX_KEPT else {}
    temporary = f"{_place}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(_place), exist_ok=True)
        with open(temporary, "wb") as out:
            out.write(marshal.dumps(kept))
        os.replace(temporary, _place)
    except (OSError, ValueError):  # ValueError: a fact marshal cannot write
        with contextlib.suppress(OSError):
            os.unlink(temporary)


__all__ = ["keep_in", "recall", "remember", "stamp_of"]
