"""Where a project's state lives: the one rule that decides it, and the typed answer every command uses.

First match wins: the location given (``--state``, relative to ``-C``/the working directory),
then ``RIG_STATE_URL`` (the project's ``.env`` counts: callers load it first; a relative path
there is the project's), then ``<project>/.rig/state.sqlite``. Anything shaped ``scheme://`` is
a URL: ``postgresql://`` and ``postgres://`` select PostgreSQL, every other scheme is refused
(never taken for a file name). Anything else is a SQLite file, which must be a regular file or
not exist yet under a directory: a FIFO, socket, device or directory would hang or fail later.

Pure decisions and ``stat`` calls only: nothing is created, opened or imported here.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from rigcli.errors import StateError
from rigcli.layout import STATE_URL_ENV, default_state_path
from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: this module is on `rig logs TASK` answered from the cache, which imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Final
    from urllib.parse import SplitResult

if TYPE_CHECKING:
    import re
    import urllib.parse as urllib_parse
else:
    urllib_parse = lazy_module("urllib.parse")
    re = lazy_module("re")


POSTGRES_SCHEMES = ("postgresql", "postgres")
MASK = "***"
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# libpq parameters whose values are secrets, masked wherever a URL is shown.
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


# Plain slotted classes, not dataclasses or NamedTuples: every command imports this module, and
# a frozen dataclass costs its import ~3M instructions of generated code, a NamedTuple ~0.6M, a
# class like these ~0.1M (see rigcli/speed/__init__.py). They are values: nothing assigns to them.
class SQLiteState:
    """State in a SQLite file at ``path`` (absolute; symlinks kept as written)."""

    __slots__ = ("path",)
    backend: Final = "sqlite"

    def __init__(self, path: str) -> None:
        self.path = path

    @property
    def target(self) -> str:
        """What the store opens."""
        return self.path

    @property
    def display(self) -> str:
        """What is shown to people: the path."""
        return self.path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SQLiteState) and other.path == self.path

    def __hash__(self) -> int:
        return hash((SQLiteState, self.path))

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"SQLiteState({self.path!r})"


class PostgresState:
    """State in a PostgreSQL database; ``url`` may hold a password, so only ``display`` is ever shown."""

    __slots__ = ("url",)
    backend: Final = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def target(self) -> str:
        return self.url

    @property
    def display(self) -> str:
        """``postgresql://user:***@host:port/db``."""
        return mask_url(self.url)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PostgresState) and other.url == self.url

    def __hash__(self) -> int:
        return hash((PostgresState, self.url))

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"PostgresState({self.display!r})"


StateLocation = SQLiteState | PostgresState


class StateGiven:
    """A location as a person wrote it (``--state``), kept to be resolved later, and the directory
    a relative path in it is relative to (``-C``, else the working directory at the time)."""

    __slots__ = ("base", "text")

    def __init__(self, text: str, base: str) -> None:
        self.text = text
        self.base = base

    def __repr__(self) -> str:
        shown = mask_url(self.text) if url_scheme(self.text) else self.text
        return f"StateGiven({shown!r}, {self.base!r})"


def given_state(
    value: StateLocation | StateGiven | str | os.PathLike[str] | None, *, base: str | os.PathLike[str] | None = None
) -> StateLocation | StateGiven | None:
    """``value`` kept for ``resolve_state_location``: a path or URL as written becomes a StateGiven
    relative to ``base`` (default: the working directory now); an empty one means none was given."""
    if value is None or isinstance(value, (SQLiteState, PostgresState, StateGiven)):
        return value
    text = os.fspath(value)
    if not text.strip():
        return None
    return StateGiven(text, os.fspath(base) if base is not None else os.getcwd())


class StateLocationError(StateError):
    """The state named cannot be used (unknown scheme, not a file); ``shown`` is the masked location."""

    def __init__(self, message: str, *, shown: str, backend: str | None) -> None:
        super().__init__(message)
        self.shown = shown
        self.backend = backend


def is_state_url(location: object) -> bool:
    """True for a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and url_scheme(location) in POSTGRES_SCHEMES


def url_scheme(text: str) -> str | None:
    """The lowercased scheme of ``scheme://...`` (RFC 3986: a letter, then letters, digits, ``+.-``),
    or None for anything that is not shaped like a URL."""
    scheme, sep, _ = text.partition("://")
    if not sep or not scheme[:1].isalpha() or not scheme.isascii() or not set(scheme) <= _SCHEME_CHARS:
        return None
    return scheme.lower()


def resolve_state_location(
    project_dir: str | os.PathLike[str],
    *,
    given: StateLocation | StateGiven | str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> StateLocation:
    """The state of the project in ``project_dir``: ``given`` (a path relative to the working
    directory, or to a StateGiven's base), else ``RIG_STATE_URL`` in ``environ`` (default
    ``os.environ``; a path there is relative to the project), else ``<project>/.rig/state.sqlite``.
    Raises StateLocationError for what cannot be state.
    """
    given = given_state(given)
    if isinstance(given, (SQLiteState, PostgresState)):
        return given
    if given is not None:
        return state_at(given.text, base=given.base, source="--state")
    configured = (os.environ if environ is None else environ).get(STATE_URL_ENV, "").strip()
    if configured:
        return state_at(configured, base=project_dir, source=STATE_URL_ENV)
    return state_at(default_state_path(project_dir), base=project_dir, source="the project's state")


def state_at(text: str, *, base: str | os.PathLike[str] | None, source: str) -> StateLocation:
    """A location as a person wrote it: a supported URL, or a path made absolute against ``base``.

    ``source`` names where it came from (``--state``, ``RIG_STATE_URL``, ``--to``) in refusals.
    """
    scheme = url_scheme(text)
    if scheme in POSTGRES_SCHEMES:
        return PostgresState(text)
    if scheme is not None:
        shown = mask_url(text)
        msg = (
            f"{source} {shown}: rig keeps state in a SQLite file or PostgreSQL "
            f"(postgresql:// or postgres://), not {scheme}://"
        )
        raise StateLocationError(msg, shown=shown, backend=None)
    start = os.fspath(base) if base is not None else os.getcwd()
    path = os.path.abspath(os.path.join(start, os.path.expanduser(text)))
    _check_file(path, source)
    return SQLiteState(path)


def _check_file(path: str, source: str) -> None:
    """Refuse a path that names something other than a regular file, or has no directory to be made in."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        _check_parent(path, source)
        return
    except NotADirectoryError:
        _check_parent(path, source)
        return
    except OSError:
        return  # unreadable (permissions): opening it reports that better
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    msg = f"{source} {path} is {kind}, not a file rig can keep its state in"
    raise StateLocationError(msg, shown=path, backend="sqlite")


def _check_parent(path: str, source: str) -> None:
    """The nearest existing ancestor must be a directory: the state file and its directories go there."""
    ancestor = os.path.dirname(path)
    while True:
        try:
            mode = os.stat(ancestor).st_mode
            break
        except (FileNotFoundError, NotADirectoryError):
            parent = os.path.dirname(ancestor)
            if parent == ancestor:
                return
            ancestor = parent
        except OSError:
            return
    if not stat.S_ISDIR(mode):
        msg = f"{source} {path} cannot be created: {ancestor} is not a directory"
        raise StateLocationError(msg, shown=path, backend="sqlite")


def unsplit_url(parts: SplitResult, *, netloc: str, query: str) -> str:
    # Not urlunsplit: it drops an empty authority, and "postgresql:///db?host=/run/postgresql"
    # (a unix socket) must keep its "//".
    text = f"{parts.scheme}://{netloc}{parts.path}"
    text += f"?{query}" if query else ""
    return text + (f"#{parts.fragment}" if parts.fragment else "")


def mask_url(url: str) -> str:
    """The URL with its password (in the user part or a ``password=`` parameter) shown as ``***``."""

    try:
        parts = urllib_parse.urlsplit(url)
    except ValueError:
        return re.sub(r"(//[^:/@]*:)[^@]*@", rf"\g<1>{MASK}@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostinfo = netloc.rpartition("@")
        if ":" in userinfo:
            userinfo = f"{userinfo.split(':', 1)[0]}:{MASK}"
        netloc = f"{userinfo}@{hostinfo}"
    query = parts.query
    if query:
        pairs = [
            (key, MASK if key in _SECRET_PARAMETERS else value)
            for key, value in urllib_parse.parse_qsl(query, keep_blank_values=True)
        ]
        query = urllib_parse.urlencode(pairs, safe="/*")
    return unsplit_url(parts, netloc=netloc, query=query)


__all__ = [
    "MASK",
    "POSTGRES_SCHEMES",
    "PostgresState",
    "SQLiteState",
    "StateGiven",
    "StateLocation",
    "StateLocationError",
    "given_state",
    "is_state_url",
    "mask_url",
    "resolve_state_location",
    "state_at",
    "unsplit_url",
]
