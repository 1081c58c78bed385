"""Dataclass methods compiled once and kept on disk, as Python keeps a module's code in a .pyc file.

``dataclasses.dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``… as source
text and compiles it with ``exec``. Compiling is most of what making a class costs: the ~100
methods of the ~23 records a cached ``rig plan`` makes take ~75 M instructions to compile, about
a sixth of the whole command. The text of a class's methods is the same on every run, so the code
compiled from it is too. While a lazy dataclass is made (``records.materialize``), ``dataclasses``
is given an ``exec`` that looks the text up among the code objects kept in
``$RIG_HOME/cache/dataclass-code/<interpreter>.marshal`` and compiles, as ``exec`` would, only
what is not there; what was new is written back when the process ends. A kept code object is
what compiling its exact text gives, so no class behaves differently; a missing, unreadable or
foreign file only means compiling as before.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import CodeType
from typing import Any

MAX_KEPT = 4_000  # texts of every rig version ever run would pile up: past this, start afresh

_place: Path | None = None
_kept: dict[str, CodeType] | None = None
_write_at_exit = False  # set once something new was compiled


def keep_in(cache_dir: Path) -> None:
    """Keep compiled methods under ``cache_dir`` (``$RIG_HOME/cache``) from now on in this process."""
    global _place, _kept
    if _place is None:
        _place = cache_dir / "dataclass-code" / f"{_interpreter_tag()}.marshal"
        _kept = None


def _interpreter_tag() -> str:
    # The bytecode format: what a .pyc's magic number stands for (it changes within a minor version only rarely).
    from importlib.util import MAGIC_NUMBER

    return f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"


def _load() -> dict[str, CodeType]:
    global _kept
    if _kept is None:
        _kept = {}
        if _place is not None:
            import marshal

            try:
                found = marshal.loads(_place.read_bytes())
            except (OSError, EOFError, ValueError, TypeError):
                found = None
            if isinstance(found, dict):
                _kept = {text: code for text, code in found.items() if isinstance(code, CodeType)}
    return _kept


def _exec(source: Any, namespace: dict[str, Any] | None = None, local_names: Any = None) -> None:
    """``exec`` as ``dataclasses`` calls it, with the code for a text it has seen before taken from the cache."""
    global _write_at_exit
    if isinstance(source, str) and _place is not None:
        kept = _load()
        code = kept.get(source)
        if code is None:
            # dont_inherit: compiled as dataclasses' own exec would, without this module's __future__ flags
            code = kept[source] = compile(source, "<string>", "exec", dont_inherit=True)
            if not _write_at_exit:
                import atexit

                atexit.register(_write)
                _write_at_exit = True
        source = code
    exec(source, namespace, local_names)


@contextmanager
def cached_exec() -> Iterator[None]:
    """While it lasts, ``dataclasses`` compiles through the cache (``records.materialize`` holds its lock)."""
    if getattr(dataclasses, "exec", None) is _exec:  # a base made while a subclass is made
        yield
        return
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]


def _write() -> None:
    """Write what this process compiled, beside what was kept (atomically: a reader sees one whole file)."""
    if _place is None or _kept is None:
        return
    import marshal

    kept = _kept if len(_kept) <= MAX_KEPT else {}
    temporary = _place.with_name(f"{_place.name}.{os.getpid()}.tmp")
    try:
        _place.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(marshal.dumps(kept))
        os.replace(temporary, _place)
    except OSError:
        with suppress(OSError):
            temporary.unlink()


__all__ = ["cached_exec", "keep_in"]
