"""A distribution's version without importlib.metadata: read off the directory pip installs it as."""

from __future__ import annotations

import os
import sys


def installed_version(distribution: str) -> str:
    """``importlib.metadata.version(distribution)`` read off the name of its ``<name>-<version>.dist-info``
    directory (what pip writes), without importing importlib.metadata and the email parser it reads
    ``METADATA`` with (~100M instructions). Like it, the first ``sys.path`` entry holding the
    distribution wins; anything else there (an ``.egg-info``, a zip, none found) is asked of the real one."""
    wanted = _normalized(distribution)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except (FileNotFoundError, PermissionError):
            continue
        except OSError:  # a zip file or something else importlib.metadata may read and this does not
            break
        for name in names:
            stem, dot, kind = name.rpartition(".")
            project, _, version = stem.partition("-")
            if dot and kind in ("dist-info", "egg-info") and _normalized(project) == wanted:
                if kind == "dist-info" and version and "-" not in version:
                    return version
                return _real_version(distribution)
    return _real_version(distribution)


def _normalized(name: str) -> str:
    """A distribution name as PEP 503 compares it (``psycopg_binary`` is ``psycopg-binary``)."""
    return "-".join(part for part in name.lower().replace("_", "-").replace(".", "-").split("-") if part)


def _real_version(distribution: str) -> str:
    __import__("importlib.metadata")
    version: str = sys.modules["importlib.metadata"].version(distribution)
    return version


__all__ = ["installed_version"]
