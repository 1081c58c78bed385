"""What rig imports with some of its imports left for first use, and why each (``imports.py`` does it).

Each table is measured where it says; a module named here that its importer reads at import time
is simply loaded then, so a table can only be too hopeful, never wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.speed.distributions import installed_version

# Names a stand-in gives as real values when the module it stands in for is read at import time
# for them only, and they are to be had without that module.
CHEAP: Mapping[str, Mapping[str, object]] = {
    "importlib.metadata": {"version": installed_version},
}

# Packages read for a few names only, each name with the submodule that defines it (``_PackageInParts``).
# psycopg reads these of asyncio while it loads (errors, _acompat, waiting, connection_async), and
# asyncio's __init__ would load all of it: event loops, streams, subprocesses, ssl.
IN_PARTS: Mapping[str, Mapping[str, str]] = {
    "asyncio": {
        "CancelledError": "exceptions",
        "Future": "futures",
        "Lock": "locks",
        "Queue": "queues",
        "Task": "tasks",
        "get_running_loop": "events",
        "sleep": "tasks",
    },
}

# What a module imports only for a rare branch (measured on a cached plan of 200 tasks, speed/__init__.py):
# dataclasses: inspect (to write the docstring of a class without one; ~17M instructions with dis,
# linecache, importlib.machinery) and copy (asdict); pathlib: ntpath (PureWindowsPath) and
# urllib.parse with ipaddress (Path.as_uri; ~12M).
RARELY_USED: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "dataclasses": {"inspect": (), "copy": ()},
    "pathlib": {"ntpath": (), "urllib.parse": ("quote_from_bytes",)},
}

# The same for the PostgreSQL driver (psycopg 3 with its binary build; no-op apply of 200 tasks):
# psycopg and psycopg_binary read their own version with importlib.metadata (~100M instructions
# with email, zipfile, csv), which ``installed_version`` answers from the directory name;
# psycopg.pq.misc imports ctypes.util to find libpq for its pure-Python build only (−14M);
# asyncio is loaded in parts (``IN_PARTS``: −16M) and the binary build's ``import ssl`` is left
# for first use (−18M; libpq does TLS itself). 846.5 M -> 804.8 -> 791.0 -> 775.8 -> 758.1.
# A name psycopg stops importing is simply never loaded; one it reads at import time loads it then.
DRIVER_RARELY_USED: Mapping[str, tuple[str, ...]] = {
    "importlib.metadata": (),
    "ctypes": (),
    "ctypes.util": ("find_library",),
    "asyncio": (),
    "ssl": (),
}


__all__ = ["CHEAP", "DRIVER_RARELY_USED", "IN_PARTS", "RARELY_USED"]
