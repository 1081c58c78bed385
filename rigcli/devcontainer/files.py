"""The files that go into a container: the project's (git-tracked and untracked-not-ignored, or the whole
directory), a build context's less its ``.dockerignore``, their digest, and a tar of them.

The digest is what a task's cache key holds for them: every file's path, mode and content (a
symlink's target), in path order. It is taken when the config loads, so ``rig plan`` knows when they
changed.
"""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
import tarfile
from collections.abc import Iterable, Mapping
from functools import lru_cache

from rigcli.errors import ConfigError
from rigcli.layout import STATE_DIR
from rigcli.load_inputs import note_inputs
from rigcli.speed.digests import sha256

GIT_SECONDS = 30.0  # `git ls-files` of a large repository; one that takes longer is not waited for


def project_files(root: str) -> list[str]:
    """The project's files, relative to ``root``: what git tracks plus what it would add (untracked,
    not ignored) when ``root`` is in a git work tree, else every file; never rig's own ``.rig``."""
    listed = _git_files(root)
    files = listed if listed is not None else walk_files(root)
    return sorted(path for path in files if not _in_state_dir(path) and os.path.lexists(os.path.join(root, path)))


def _git_files(root: str) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None  # not a git work tree (or no git): the directory as it is
    return sorted({item for item in done.stdout.decode("utf-8", "surrogateescape").split("\0") if item})


def walk_files(root: str) -> list[str]:
    """Every file and symlink below ``root`` (relative, ``/``-separated), rig's ``.rig`` left out."""
    found: list[str] = []
    for directory, subdirs, names in os.walk(root):
        relative = os.path.relpath(directory, root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        if prefix == "":
            subdirs[:] = [name for name in subdirs if name != STATE_DIR]
        for name in subdirs:
            if os.path.islink(os.path.join(directory, name)):
                found.append(prefix + name)  # a symlink to a directory is kept as the link
        found.extend(prefix + name for name in names)
    return sorted(found)


def _in_state_dir(path: str) -> bool:
    return path == STATE_DIR or path.startswith(STATE_DIR + "/")


def context_files(context: str) -> list[str]:
    """A build context's files less what its ``.dockerignore`` excludes (Docker's rules)."""
    patterns = _dockerignore(os.path.join(context, ".dockerignore"))
    files = walk_files(context)
    if not patterns:
        return files
    return [path for path in files if not ignored(path, patterns)]


def _dockerignore(path: str) -> list[tuple[bool, re.Pattern[str]]]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    patterns: list[tuple[bool, re.Pattern[str]]] = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        body = os.path.normpath(line[1:].strip() if negated else line).lstrip("/")
        if body in ("", "."):
            continue
        patterns.append((negated, _compiled(body)))
    return patterns


def ignored(path: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories decides."""
    parents = [path]
    parts = path.split("/")
    parents.extend("/".join(parts[:end]) for end in range(1, len(parts)))
    excluded = False
    for negated, pattern in patterns:
        if any(pattern.fullmatch(candidate) for candidate in parents):
            excluded = not negated
    return excluded


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    """Go's filepath.Match as Docker extends it: ``*`` and ``?`` within a name, ``**`` across names."""
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):
                index += 1
                out.append("(?:.*/)?")
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out))


def tree_digest(root: str, files: Iterable[str]) -> str:
    """SHA-256 over each file's path, mode and content (a symlink's target), in the order given.

    What it read is noted for the project's memo (``load_inputs``): each file, each directory
    that holds one (a file added there changes its stamp) and, in a git work tree, git's index."""
    files = list(files)
    _note_tree(root, files)
    digest = sha256()
    for path in files:
        full = os.path.join(root, path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            continue
        digest.update(f"{path}\0{stat.S_IMODE(info.st_mode):o}\0".encode("utf-8", "surrogateescape"))
        if stat.S_ISLNK(info.st_mode):
            digest.update(b"link\0" + os.fsencode(os.readlink(full)))
        elif stat.S_ISREG(info.st_mode):
            with open(full, "rb") as handle:
                for chunk in iter(lambda handle=handle: handle.read(1 << 20), b""):  # type: ignore[misc]
                    digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def _note_tree(root: str, files: list[str]) -> None:
    folders = {root} | {os.path.join(root, os.path.dirname(path)) for path in files}
    index = os.path.join(root, ".git", "index")
    extra = [index] if os.path.exists(index) else []
    note_inputs([*folders, *(os.path.join(root, path) for path in files), *extra])


def tar_of(root: str, files: Iterable[str], *, prefix: str = "", extra: Mapping[str, str] | None = None) -> bytes:
    """A tar of ``files`` (relative to ``root``) under ``prefix``, owned by root, modes and times kept;
    ``extra``: more files (path in the archive -> text)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, text in (extra or {}).items():
            data = text.encode("utf-8")
            added = tarfile.TarInfo(path)
            added.size, added.mode = len(data), 0o644
            archive.addfile(added, io.BytesIO(data))
        for path in files:
            full = os.path.join(root, path)
            if not os.path.lexists(full):
                continue
            info = archive.gettarinfo(full, arcname=prefix + path)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if info.isfile():
                with open(full, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    return buffer.getvalue()


__all__ = ["context_files", "ignored", "project_files", "tar_of", "tree_digest", "walk_files"]
