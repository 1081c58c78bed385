"""Records to rows and back by column name: one ``Columns`` per table, on every backend.

A record's fields are its table's columns, in order, named alike; a field stored as JSON text
lives in ``<field>_json``. ``tests/state`` checks each ``Columns`` against the schema's one
description (tables.py), so a field and its column cannot drift apart.

Reading goes by the names the cursor reports (``cursor.description``, the same on sqlite3 and
psycopg), looked up once per query: the per-row work is one C-level pick of the values in
field order, the decoders, and the record's constructor — as cheap as reading by position (a
cached plan reads every run of its workflow). Writing binds ``:column`` parameters by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cached_property
from operator import itemgetter
from typing import Any, Generic, TypeVar, cast

from rigcli.errors import StateError
from rigcli.jsonutil import JsonValue
from rigcli.speed.records import field_names, positional_maker
from rigcli.state.database import dumps
from rigcli.state.dialect import Cursor, Row

R = TypeVar("R")
Decoder = Callable[[Any], object]  # takes a column's value as the driver returns it
Encoder = Callable[[Any], object]  # takes a field's value


# The decoder's own C scanner: json.loads wraps it in ~90 bytecodes of checks a column's text,
# written by rig without surrounding whitespace, does not need (a cached plan reads 4 per task).
_scan: Callable[[str, int], tuple[object, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _load(text: str | None) -> object:
    """A JSON column's value (SQL NULL stays None)."""
    if text is None:
        return None
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)  # not JSON at its start: json.loads says what is wrong
    return value if end == len(text) else json.loads(text)


def _dump(value: object) -> object:
    return dumps(cast(JsonValue, value))  # a record's JSON fields hold JSON values


def _same(value: object) -> object:
    return value


class _Layout:
    """A table's columns as worked out on first use. A plain class: a NamedTuple's string
    annotations each cost a compile (``typing.ForwardRef``) when the class is made."""

    __slots__ = ("columns", "decoders", "derived", "encoders", "fields", "select")

    def __init__(
        self,
        *,
        fields: tuple[str, ...],
        columns: tuple[str, ...],
        select: str,
        derived: tuple[tuple[int, str, Callable[[], object]], ...],
        decoders: tuple[tuple[int, Decoder], ...],
        encoders: dict[str, Encoder],
    ) -> None:
        self.fields, self.columns, self.select, self.derived = fields, columns, select, derived
        self.decoders, self.encoders = decoders, encoders


class Columns(Generic[R]):
    """How records of one type are stored in ``table``: which column holds each field, and how.

    ``as_json``: fields stored as JSON text in ``<field>_json`` (secrets masked on the way in).
    ``decode``/``encode``: a field's conversion after reading (after JSON decoding) / before writing.
    ``derived``: fields that are not stored, read as the factory's value (the store fills them in).
    ``unused``: columns no field maps, written with this value by ``insert`` and otherwise left alone.
    ``names``: the fields, when ``record`` is not a dataclass (a TypedDict's constructor).
    """

    def __init__(
        self,
        record: Callable[..., R],
        table: str,
        *,
        as_json: Collection[str] = (),
        decode: Mapping[str, Decoder] | None = None,
        encode: Mapping[str, Encoder] | None = None,
        derived: Mapping[str, Callable[[], object]] | None = None,
        unused: Mapping[str, object] | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.record = record
        self.table = table
        self.unused: dict[str, object] = dict(unused or {})
        self._as_json, self._names = frozenset(as_json), None if names is None else tuple(names)
        self._decode, self._encode, self._derived = dict(decode or {}), dict(encode or {}), dict(derived or {})

    @cached_property
    def _layout(self) -> _Layout:
        # Worked out when the table is first used, not when its module is imported: reading a
        # record's fields makes its (lazy) dataclass, and a command uses few of the tables it imports.
        table, as_json, decode, encode, derived = self.table, self._as_json, self._decode, self._encode, self._derived
        every = self._names if self._names is not None else _field_names(self.record)
        unknown = (set(as_json) | set(decode) | set(encode) | set(derived)) - set(every)
        if unknown:
            raise ValueError(f"{table}: no such fields: {', '.join(sorted(unknown))}")
        stored = tuple(name for name in every if name not in derived)
        columns = tuple(f"{name}_json" if name in as_json else name for name in stored)
        if len(columns) < 2:
            raise ValueError(f"{table}: a record has at least two fields")  # itemgetter of one is not a tuple
        decoders: list[tuple[int, Decoder]] = []
        for index, name in enumerate(every):  # positions in the record, derived fields included
            after = decode.get(name)
            if name in as_json:
                decoders.append((index, _load if after is None else _then(_load, after)))
            elif after is not None:
                decoders.append((index, after))
        return _Layout(
            fields=stored,
            columns=columns,
            select=", ".join(f'"{column}"' for column in columns),
            derived=tuple((index, name, derived[name]) for index, name in enumerate(every) if name in derived),
            decoders=tuple(decoders),
            encoders={
                column: encode.get(name, _dump if name in as_json else _same)
                for name, column in zip(stored, columns, strict=True)
                if name in as_json or name in encode
            },
        )

    @cached_property
    def _make(self) -> Callable[..., object]:
        """The record from its fields' values, in order; made when a first row is read (a query
        that finds nothing, as a cached plan's of expiring workspaces, leaves a lazy record unmade)."""
        return self.record if self._names is not None else positional_maker(cast(type, self.record))

    @property
    def fields(self) -> tuple[str, ...]:
        """The stored fields, in order (``derived`` ones are not stored)."""
        return self._layout.fields

    @property
    def columns(self) -> tuple[str, ...]:
        """The stored fields' columns, in the same order."""
        return self._layout.columns

    @property
    def select(self) -> str:
        """``"a", "b_json", …``: every column, for a SELECT that ``reader`` can read."""
        return self._layout.select

    @property
    def derived(self) -> tuple[tuple[int, str, Callable[[], object]], ...]:
        return self._layout.derived

    def reader(self, cursor: Cursor) -> Callable[[Row], R]:
        """Turns this query's rows into records; the query must select every column (``select``)."""
        description = cursor.description or ()
        position = {str(column[0]): index for index, column in enumerate(description)}
        missing = [column for column in self.columns if column not in position]
        if missing:
            raise StateError(f"Query of {self.table} lacks the columns {', '.join(missing)}")
        pick = itemgetter(*(position[column] for column in self.columns))
        decoders, derived = self._layout.decoders, self.derived

        def read(row: Row) -> R:
            values = list(pick(row))
            for index, _, factory in derived:  # in field order, so each lands in its place
                values.insert(index, factory())
            for index, decode in decoders:
                values[index] = decode(values[index])
            return cast(R, self._make(*values))  # looked up here: a query that finds nothing makes no record

        return read

    def all(self, cursor: Cursor) -> list[R]:
        read = self.reader(cursor)
        return [read(row) for row in cursor]

    def one(self, cursor: Cursor) -> R | None:
        row = cursor.fetchone()
        return None if row is None else self.reader(cursor)(row)

    def params(self, values: Mapping[str, object]) -> dict[str, object]:
        """``{column: value}`` to bind as ``:column``: a record's stored fields (from ``to_json()``) or
        some of them, and the ``unused`` columns' values."""
        encoders = self._layout.encoders
        bound = {
            column: encoders[column](values[name]) if column in encoders else values[name]
            for name, column in zip(self.fields, self.columns, strict=True)
            if name in values
        }
        return {**bound, **self.unused}

    def insert(self) -> str:
        """``INSERT INTO table (...) VALUES (:column, ...)`` of every column (``unused`` ones included)."""
        columns = [*self.columns, *self.unused]
        names = ", ".join(f'"{column}"' for column in columns)
        return f"INSERT INTO {self.table} ({names}) VALUES ({', '.join(f':{column}' for column in columns)})"

    def assignments(self, columns: Iterable[str] | None = None) -> str:
        """``"a" = :a, "b" = :b`` for an UPDATE of ``columns`` (default: every column)."""
        return ", ".join(f'"{column}" = :{column}' for column in (self.columns if columns is None else columns))


def _field_names(record: object) -> tuple[str, ...]:
    names = field_names(record) if isinstance(record, type) else None  # a lazy record stays unmade
    if names is None:
        raise TypeError(f"{record!r} is not a dataclass: pass names=")
    return names


def _then(first: Decoder, second: Decoder) -> Decoder:
    return lambda value: second(first(value))


def json_object(value: object) -> dict[str, JsonValue]:
    """A decoder for a JSON column that must hold an object: anything else reads as ``{}``."""
    return value if isinstance(value, dict) else {}


__all__ = ["Columns", "json_object"]
