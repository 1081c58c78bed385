"""Handler fingerprints: a hash of what a task handler will run, blind to formatting and location.

``handler_fingerprint(fn, project_dir=...)`` is ``tagged_hash("handler-v1", describe_handler(...))``.
The description is ``{"handler": <value>, "defs": [<definition>, ...]}``: the handler as a
value, plus a table of the project definitions it reaches, numbered in the order they are met
(breadth first) and referenced as ``{"t": "ref", "n": i}``, so shared helpers and recursion are
described once and cycles terminate.

Project code is code whose file lies inside ``project_dir`` (real paths), excluding installed
packages (``site-packages``, a virtualenv inside the project). Its inputs:

- functions (plain, ``async``, nested, lambdas, methods): the AST of their own ``def`` or
  ``lambda``, without positions, comments, docstrings or the function's decorator lines;
  their qualname and file relative to the project; default and keyword-only default values;
  closure values; the value of every global they (or code nested in them) read, following
  ``helpers.x.y`` through project modules to the object actually used, transitively; the
  modules and names they import inside their body (a project module that is not loaded yet
  contributes its file's source);
- functions whose source cannot be found or no longer matches the loaded code: their
  bytecode, names and constants instead, tagged with the Python ``major.minor``;
- classes: the AST of their ``class`` statement (decorators and method bodies included), the
  globals it names, and closure values of its methods;
- a whole project module, when a handler uses the module object itself: its source, and the
  project functions, classes and modules it takes from other files;
- ``functools.wraps`` wrappers: the wrapper (the decorator's inner function, whose closure
  holds the wrapped function and the decorator's arguments) and ``__wrapped__``;
  ``functools.partial``: function, arguments and keywords; bound methods: function and
  ``self``.

Values: JSON scalars as themselves (strings with the project path replaced by ``<project>``);
containers tagged with their type (dict items and sets sorted); enum members by type and name;
dataclasses and named tuples by fields; instances of project classes by type and state; other
objects by type and repr, the repr left out when it shows a memory address (or is
``os.environ``). Code outside the project (stdlib, site-packages, builtins) contributes its
``module:qualname`` only, and attributes of installed modules are named, never read.

Not inputs: line numbers, absolute paths, memory addresses, the importing module's
``__name__``/``__spec__`` (rig_config.py is imported under a fresh name on every load), and
docstrings: editing documentation should not rerun setup (code that reads ``__doc__`` is the
rare exception this gives up). Changing any of the above means changing the tag, because
old fingerprints must never be compared with new ones.

Each source file is parsed once per process (again only when its size or mtime changes) and
each code object is analysed once; only the walk over current values runs on every call.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from rigcli.fingerprint.describe import Describer
from rigcli.fingerprint.project import Project
from rigcli.jsonutil import JsonValue, tagged_hash

TAG = "handler-v1"


@lru_cache(maxsize=16)
def _project(project_dir: str) -> Project:
    return Project(project_dir)


def describe_handler(fn: object, *, project_dir: str | Path) -> JsonValue:
    """The canonical description that ``handler_fingerprint`` hashes (for debugging and tests)."""
    return Describer(_project(os.path.abspath(os.fspath(project_dir)))).describe(fn)


def handler_fingerprint(fn: object, *, project_dir: str | Path) -> str:
    """A stable hash of ``fn`` and the project code and values it depends on.

    ``fn`` is usually a handler, but any value works (cache keys also fingerprint output schemas).
    """
    return tagged_hash(TAG, describe_handler(fn, project_dir=project_dir))


__all__ = ["TAG", "describe_handler", "handler_fingerprint"]
