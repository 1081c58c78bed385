"""The project's memo file: remembered answers by name, stamped with every project file the load read.

One file per config (``$RIG_HOME/cache/answers/``), written with ``marshal`` (as ``.pyc`` files
are: built into the interpreter, where json's import alone costs a cached command ~5M
instructions). It holds only dicts, lists, strings, numbers, booleans and None::

    {"format": FORMAT, "version": rig's version, "config": absolute config path,
     "stamps": [[path, file_stamp], ...],   # rig_config.py, its helpers, .env, what else it read
     "answers": {name: answer, ...}}        # each answer's own form: rigcli/cache/answers.py

A file whose format, version, config or stamps do not read as they were is not used; a file that
does not read back is not used; a home that cannot be written to keeps nothing.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from collections.abc import Mapping, Sequence

from rigcli.speed.file_facts import file_stamp

FORMAT = "rig.answers/1"
CLOCK_SLACK = 0.02  # seconds: how far a file's times may lag time.time() (a kernel tick, with room)
MAX_FILES = 200  # a project importing more of its own files than this is not remembered (stat costs)


def memo_file(cache_dir: str, config_path: str) -> str:
    # Not hashlib: importing it loads OpenSSL (~5 ms). Two configs sharing a name only take turns,
    # as the file holds the path it is for.
    name = os.path.abspath(config_path).encode("utf-8", "surrogateescape")
    return os.path.join(cache_dir, "answers", f"{zlib.crc32(name):08x}{zlib.adler32(name):08x}.marshal")


def project_files(project_dir: str, config_path: str) -> list[str]:
    """The config, ``.env``, and every module imported from the project's directory (the config's helpers)."""
    root = os.path.join(os.path.abspath(project_dir), "")
    found = {os.path.abspath(config_path), os.path.join(root, ".env")}
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and os.path.abspath(origin).startswith(root):
            found.add(os.path.abspath(origin))
    return sorted(found)


def recall(cache_dir: str, *, version: str, config_path: str) -> dict[str, object]:
    """Every answer remembered for ``config_path`` while every file its load read is as it was; else none."""
    try:
        with open(memo_file(cache_dir, config_path), "rb") as handle:
            data = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):  # what marshal raises for a file it did not write
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != version:
        return {}
    if data.get("config") != os.path.abspath(config_path):
        return {}
    stamps = data.get("stamps")
    if not isinstance(stamps, list):
        return {}
    for entry in stamps:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
            return {}
        if file_stamp(entry[0]) != entry[1]:
            return {}
    answers = data.get("answers")
    return answers if isinstance(answers, dict) else {}


def keep(
    cache_dir: str,
    *,
    version: str,
    project_dir: str,
    config_path: str,
    answers: Mapping[str, object],
    read_since: float,
    inputs: Sequence[str] = (),
) -> None:
    """Write ``answers`` for ``config_path``, stamped with the project's files now and ``inputs`` (more
    files or directories the load read: ``load_inputs.py``). Nothing is written when one of those
    changed after ``read_since`` (``time.time()`` when the load began): the stamp would be of bytes
    the load may not have read."""
    files = sorted({*project_files(project_dir, config_path), *(os.path.abspath(path) for path in inputs)})
    if len(files) > MAX_FILES:
        return
    stamps = {path: file_stamp(path) for path in files}
    # A file's times come from the kernel's coarse clock, up to a tick (1-10 ms) behind time.time().
    since_ns = int((read_since - CLOCK_SLACK) * 1e9)
    if any(stamp is not None and max(stamp[0], stamp[1]) >= since_ns for stamp in stamps.values()):
        return
    data = {
        "format": FORMAT,
        "version": version,
        "config": os.path.abspath(config_path),
        "stamps": [[path, stamp] for path, stamp in stamps.items()],
        "answers": dict(answers),
    }
    path = memo_file(cache_dir, config_path)
    import contextlib  # only a command that computed its answers keeps them

    # A name of this process's own, not tempfile (it imports random, shutil and more than the write costs).
    temporary = os.path.join(os.path.dirname(path), f".answers-{os.getpid()}-{id(data):x}")
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps(data))
            os.replace(temporary, path)
        except (OSError, ValueError):  # ValueError: marshal met a value it cannot write
            with contextlib.suppress(OSError):
                os.unlink(temporary)


__all__ = ["keep", "memo_file", "project_files", "recall"]
