"""What a project's config defines, remembered while its files stay the same: ``rig logs TASK`` without the config.

Reading a run's stored output needs only the state and the answer to "which stored runs does
TASK mean" (its workflow, its cache path, the store it runs in). Loading the config to answer it
imports rig's DSL, the project's code and compiles every workflow: most of a ``rig logs`` of a
small run, and ~4x ``cat`` of a 50 MB one on its own. A full load (``engine/history.py``)
remembers the answer in ``$RIG_HOME/cache/task-names/``, stamped with the ``stat`` of every file
of the project that load imported (``rig_config.py``, its helper modules) and of ``.env``, and
with rig's version; a later ``rig logs`` uses it only while every stamp still matches (a few
``stat`` calls), and otherwise loads the config as before, which remembers it anew. What a
config computes from the environment alone is not seen: such a config is still read right by
any command but ``rig logs TASK``, which then names the tasks of the last load.

Other lean paths keep what they need in the same file, each under a name in ``sections``
(``attach``: ``speed/attach_memo.py``), written by the same full load (``engine/memo.py`` builds
every section at once, so no writer drops another's) and read with ``recall_section``; a reader
treats a section it does not find as nothing remembered.

The memo is written with ``marshal`` (as ``.pyc`` files are), not json: marshal is built into the
interpreter, while importing json (its decoder compiles regular expressions) cost ``rig logs
TASK`` ~5M instructions, as much as the rest of finding the project and its task. It holds only
dicts, lists, strings, numbers, booleans and None; a file that does not read back is not used.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Iterable, Mapping, Sequence

FORMAT = "rig.task-names/2"
CLOCK_SLACK = 0.02  # seconds: how far a file's times may lag time.time() (a kernel tick, with room)
MAX_FILES = 200  # a project importing more of its own files than this is not remembered (stat costs)
# (path, cache path, name, store) of each task, in plan order, by workflow name.
TaskRow = tuple[str, str, str, str]


def memo_file(cache_dir: str | os.PathLike[str], config_path: str) -> str:
    # Not hashlib: importing it loads OpenSSL (~5 ms). Two configs sharing a name only take turns,
    # as the file holds the path it is for. Not pathlib: rig logs TASK's lean path imports none.
    import zlib

    name = os.path.abspath(config_path).encode("utf-8", "surrogateescape")
    return os.path.join(cache_dir, "task-names", f"{zlib.crc32(name):08x}{zlib.adler32(name):08x}.marshal")


def file_stamp(path: str) -> list[int] | None:
    """What says a file is as it was: mtime and ctime in ns, size, inode; None when it is not there."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    # ctime too: rsync -t, tar or `touch -r` can put an old mtime back on new bytes of the same
    # size, but nothing sets the change time back.
    return [found.st_mtime_ns, found.st_ctime_ns, found.st_size, found.st_ino]


def project_files(project_dir: str, config_path: str) -> list[str]:
    """The config, ``.env``, and every module imported from the project's directory (the config's helpers)."""
    root = os.path.join(os.path.abspath(project_dir), "")
    found = {os.path.abspath(config_path), os.path.join(root, ".env")}
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and os.path.abspath(origin).startswith(root):
            found.add(os.path.abspath(origin))
    return sorted(found)


def remember(
    cache_dir: str | os.PathLike[str],
    *,
    version: str,
    project_dir: str,
    config_path: str,
    workflows: Mapping[str, Iterable[TaskRow]],
    sections: Mapping[str, object] | None = None,
    read_since: float = 0.0,
    inputs: Sequence[str] = (),
) -> None:
    """Keep ``workflows``' tasks for ``recall`` and each of ``sections`` (JSON) for ``recall_section``;
    a home that cannot be written to keeps nothing, nor does a load that began at ``read_since``
    (``time.time()``) when one of its files changed after that: the stamp would be of bytes the
    load may not have read. ``inputs``: more files (or directories) the load read, stamped alike."""
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
        "workflows": {name: [list(row) for row in rows] for name, rows in workflows.items()},
        "sections": dict(sections or {}),
    }
    path = memo_file(cache_dir, config_path)
    import contextlib  # only a full load writes

    # A name of this process's own, not tempfile (it imports random, shutil and more than the write costs).
    temporary = os.path.join(os.path.dirname(path), f".task-names-{os.getpid()}-{id(data):x}")
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps(data))
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _current(cache_dir: str | os.PathLike[str], *, version: str, config_path: str) -> dict[str, object] | None:
    """The memo for ``config_path`` while every file its load read is as it was; else None."""
    try:
        with open(memo_file(cache_dir, config_path), "rb") as handle:
            data = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):  # what marshal raises for a file it did not write
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != version:
        return None
    if data.get("config") != os.path.abspath(config_path):
        return None
    stamps = data.get("stamps")
    if not isinstance(stamps, list):
        return None
    for entry in stamps:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
            return None
        if file_stamp(entry[0]) != entry[1]:
            return None
    return data


def recall(cache_dir: str | os.PathLike[str], *, version: str, config_path: str) -> dict[str, list[TaskRow]] | None:
    """The tasks a full load remembered, by workflow, while every file it read is as it was; else None."""
    data = _current(cache_dir, version=version, config_path=config_path)
    workflows = None if data is None else data.get("workflows")
    if not isinstance(workflows, dict):
        return None
    found: dict[str, list[TaskRow]] = {}
    for name, rows in workflows.items():
        if not isinstance(rows, list) or not all(_is_row(row) for row in rows):
            return None
        found[str(name)] = [(row[0], row[1], row[2], row[3]) for row in rows]
    return found


def recall_section(cache_dir: str | os.PathLike[str], *, version: str, config_path: str, section: str) -> object:
    """What a full load remembered under ``section`` while every file it read is as it was; else None."""
    return recall_sections(cache_dir, version=version, config_path=config_path).get(section)


def recall_sections(cache_dir: str | os.PathLike[str], *, version: str, config_path: str) -> dict[str, object]:
    """Every section a full load remembered while every file it read is as it was; else none."""
    data = _current(cache_dir, version=version, config_path=config_path)
    sections = None if data is None else data.get("sections")
    return sections if isinstance(sections, dict) else {}


def _is_row(row: object) -> bool:
    return isinstance(row, list) and len(row) == 4 and all(isinstance(item, str) for item in row)


def match(workflows: Mapping[str, Sequence[TaskRow]], workflow: str | None, task: str) -> tuple[str, TaskRow] | None:
    """The one task ``task`` names in the workflow a command means, as a full load would pick it
    (``Project.select``, then ``engine/selection.py:match_tasks``); None for anything else (no
    workflow, several, no task, several tasks): the full load then answers, with its errors."""
    if workflow is None:
        if len(workflows) != 1:
            return None
        workflow = next(iter(workflows))
    rows = workflows.get(workflow)
    if rows is None:
        return None
    matches = [row for row in rows if task in (row[0], row[1])] or [row for row in rows if row[2] == task]
    return (workflow, matches[0]) if len(matches) == 1 else None


__all__ = [
    "TaskRow",
    "file_stamp",
    "match",
    "memo_file",
    "project_files",
    "recall",
    "recall_section",
    "recall_sections",
    "remember",
]
