"""A PostgreSQL state URL: rig's own query parameters, what goes to libpq, and the masked form.

Pure string work (no driver import), so the CLI can show and check a URL without psycopg.
``schema`` and ``fragments_schema`` are rig's; every other parameter (``sslmode``,
``connect_timeout``, ``options``, ``host=/run/postgresql`` …) is passed to libpq untouched, and
libpq's own conventions (``PGPASSWORD``, ``~/.pgpass``, ``PGSSLMODE`` …) keep working because the
URL is handed to it as written.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from rigcli.errors import StateError
from rigcli.speed.records import lazy_dataclass
from rigcli.state_location import MASK, is_state_url, mask_url, unsplit_url

DEFAULT_SCHEMA = "rig"
DEFAULT_FRAGMENTS_SCHEMA = "rig_fragments"
RIG_PARAMETERS = ("schema", "fragments_schema")
# Lowercase identifiers only: they need no quoting anywhere (search_path, pg_namespace lookups),
# and PostgreSQL would fold an unquoted "Team" to "team" behind the user's back.
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@lazy_dataclass(frozen=True)
class PostgresURL:
    """``conninfo`` goes to libpq; ``masked`` is the only form that is ever shown or stored."""

    conninfo: str
    schema: str
    fragments_schema: str
    masked: str
    password: str | None  # from the URL itself, kept only to scrub it out of driver messages
    connect_timeout: str | None = None  # rig's bound on connecting when the URL and PGCONNECT_TIMEOUT set none

    def scrub(self, text: str) -> str:
        """``text`` with the password (plain or percent-encoded) replaced by ``***``."""
        for secret in {self.password, quote(self.password or "", safe="")} - {None, ""}:
            assert secret is not None
            text = text.replace(secret, MASK)
        return text


def _check_schema(name: str, parameter: str, masked: str) -> str:
    if not _SCHEMA_NAME.match(name):
        msg = (
            f"State URL {masked}: {parameter}={name!r} is not a valid schema name "
            "(lowercase letters, digits and _, starting with a letter or _, at most 63)"
        )
        raise StateError(msg)
    return name


def parse_url(url: str) -> PostgresURL:
    """Split a ``postgresql://`` or ``postgres://`` URL into what libpq gets and rig's schemas."""
    if not is_state_url(url):
        raise StateError(f"Not a PostgreSQL URL: {mask_url(url)}")
    masked = mask_url(url)
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as error:
        raise StateError(f"State URL {masked} cannot be parsed: {error}") from None
    ours = {key: value for key, value in pairs if key in RIG_PARAMETERS}
    rest = [(key, value) for key, value in pairs if key not in RIG_PARAMETERS]
    schema = _check_schema(ours.get("schema") or DEFAULT_SCHEMA, "schema", masked)
    fragments = _check_schema(ours.get("fragments_schema") or DEFAULT_FRAGMENTS_SCHEMA, "fragments_schema", masked)
    if schema == fragments:
        raise StateError(f"State URL {masked}: schema and fragments_schema must differ (both are {schema!r})")
    password = None
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if ":" in userinfo:
        password = unquote(userinfo.split(":", 1)[1])
    password = password or next((value for key, value in rest if key == "password"), None)
    conninfo = unsplit_url(parts, netloc=parts.netloc, query=urlencode(rest, safe="/"))
    return PostgresURL(conninfo=conninfo, schema=schema, fragments_schema=fragments, masked=masked, password=password)


__all__ = ["DEFAULT_FRAGMENTS_SCHEMA", "DEFAULT_SCHEMA", "MASK", "PostgresURL", "mask_url", "parse_url"]
