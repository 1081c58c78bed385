"""SHA-256 without importing ``hashlib``: the interpreter's own implementation, loaded alone.

``import hashlib`` asks OpenSSL for every digest it offers and builds a constructor for each
(~11 M instructions here, 3 % of a cached ``rig plan``), to give rig the one it uses. CPython
ships SHA-256 as a module of its own (``_sha2`` since 3.12, ``_sha256`` before): the same
function, the same digests (a test compares them), loaded in ~0.5 M. Where neither exists (another
interpreter) it is hashlib's. For the short texts rig hashes (canonical JSON, source digests)
the speed of either is the same; large files are hashed with ``hashlib``'s.
"""

from __future__ import annotations

import sys

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache (the entry-point index) imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from hashlib import sha256  # what mypy checks against: the same constructor, precisely typed
else:
    # The module this interpreter has first: a failed import searches every directory of
    # sys.path (~1.3 M instructions), so 3.11 does not try 3.12's name.
    _NAMES = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
    try:
        sha256 = __import__(_NAMES[0]).sha256
    except ImportError:
        try:
            sha256 = __import__(_NAMES[1]).sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["sha256"]
