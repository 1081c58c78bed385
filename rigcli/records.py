"""Value types several rooms share (runs, workspaces, reasons, applies, lock holders) and the one clock.

This module sits below every room: the state store returns these records, the cache-key room
judges them, the engine hands them out and the renderer shows them. It imports nothing of rig's
but ``jsonutil`` and ``statuses``, so any room may use it without pulling in another.

Timestamps are stored as ISO-8601 UTC text of fixed width (``utc_now``), so text order is time
order; ``parse_timestamp`` reads them back, forgiving the forms other tools write.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from typing import TYPE_CHECKING

from rigcli.jsonutil import JsonValue
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import ReasonCode, RunStatus, SeenEffectStatus, WorkspaceStatus

if TYPE_CHECKING:
    from datetime import datetime

# -- the clock ---------------------------------------------------------------------------------
# ``datetime`` is imported where a timestamp is read or computed with, not here: a cached plan
# only stamps now (``utc_now``), and importing it cost every command ~3M instructions.

if TYPE_CHECKING:
    # What an unreadable timestamp means: older than any cache TTL, so the entry is treated as stale.
    VERY_OLD: datetime

if TYPE_CHECKING:
    import datetime as datetime_module
else:
    datetime_module = lazy_module("datetime")


def __getattr__(name: str) -> object:
    if name == "VERY_OLD":  # made on first use (see the clock above)
        return very_old()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def very_old() -> datetime_module.datetime:
    """``VERY_OLD``: 1970-01-01 UTC, made once."""
    found = globals().get("VERY_OLD")
    if found is None:
        found = globals()["VERY_OLD"] = datetime_module.datetime(1970, 1, 1, tzinfo=datetime_module.timezone.utc)
    return found


# Python 3.10's fromisoformat accepts neither "Z" nor fractions other than 3 or 6 digits;
# rows edited by hand or by other tools (JavaScript's toISOString) use both.
_ISO = (  # compiled on first use, by re's own cache
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(?::\d{2})?)"
    r"(?:\.(?P<fraction>\d+))?(?P<zone>Z|z|[+-]\d{2}:?\d{2})?$"
)


def utc_datetime() -> datetime_module.datetime:
    """Now, as an aware UTC datetime (for arithmetic; store ``utc_now()`` instead)."""

    return datetime_module.datetime.now(datetime_module.timezone.utc)


def utc_now() -> str:
    """Now, as stored: ``2026-05-10T00:00:00.000000+00:00`` (fixed width, so text order is time order);
    ``timestamp(utc_datetime())``, without datetime."""
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanoseconds // 1000:06d}+00:00"


def timestamp(moment: datetime) -> str:
    """An aware datetime as stored (see ``utc_now``)."""

    return moment.astimezone(datetime_module.timezone.utc).isoformat(timespec="microseconds")


def shown_time(text: str | None) -> str:
    """A stored timestamp as people read it: local time, to the second (empty for none)."""
    if not text:
        return ""
    return parse_timestamp(text).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def parse_timestamp(text: str | None) -> datetime_module.datetime:
    """Parse a stored timestamp into an aware UTC datetime; anything unreadable is ``VERY_OLD``."""

    if not text:
        return very_old()
    match = re.match(_ISO, text.strip())
    if match is None:
        return very_old()
    fraction = (match["fraction"] or "")[:6].ljust(6, "0")
    zone = match["zone"] or "+00:00"
    if zone in ("Z", "z"):
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    clock = match["time"] if match["time"].count(":") == 2 else f"{match['time']}:00"
    try:
        parsed = datetime_module.datetime.fromisoformat(f"{match['date']}T{clock}.{fraction}{zone}")
    except ValueError:
        return very_old()
    return parsed.astimezone(datetime_module.timezone.utc)


def age_seconds(text: str | None, *, now: datetime | None = None) -> float:
    """Seconds since a stored timestamp (huge for unreadable ones, negative for future ones)."""
    reference = now if now is not None else utc_datetime()
    return (reference - parse_timestamp(text)).total_seconds()


# -- records ---------------------------------------------------------------------------------
# Frozen, every field required: a record is built whole (``dataclasses.replace`` for a changed
# copy). Fields are named after their table's columns (a JSON column adds ``_json``; see
# state/rows.py), and ``to_json`` gives them in that order: the ``--json`` shapes of DESIGN §6.


@lazy_dataclass(frozen=True)
class Reason:
    """Why a node is cached or pending: a code from DESIGN §3, its message, and optional detail.

    ``component``: for ``task-changed``/``provider-changed``, the part of the fingerprint that
    changed (``handler install_pkgs (tools.py)``, ``config key "python"``, ``provider "box"``).
    """

    code: ReasonCode
    message: str
    detail: str | None = None
    component: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        if self.component:
            data["component"] = self.component
        if self.detail:
            data["detail"] = self.detail
        return data


@lazy_dataclass(frozen=True)
class NodeRun:
    """One row of the run journal (``workflow_node_runs``)."""

    id: str
    workflow: str
    node_path: str
    node_name: str
    node_kind: str
    node_key: str
    provider_fingerprint: str
    upstream_run_ids: list[str]
    output: JsonValue | None
    artifacts: list[JsonValue]
    status: RunStatus
    invalidated: bool
    created_at: str  # ISO-8601 UTC
    finished_at: str | None
    error: str | None
    pid: int | None  # the rig process that recorded it (running runs: whether it is alive)
    host: str | None  # where that process ran
    apply_id: str | None  # the apply that ran it (``apply_runs.id``); None for runs older than the history
    metadata: dict[str, JsonValue]  # what its handler gave ``step.metadata(...)``, merged

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class FingerprintParts:
    """A row of ``fingerprint_parts``: the parts of one cache key or provider fingerprint, by name."""

    fingerprint: str
    parts: dict[str, str]  # "kind:name" -> short hash (rigcli/fingerprint/parts.py)
    created_at: str

    def to_json(self) -> dict[str, JsonValue]:
        return {"fingerprint": self.fingerprint, "parts": dict(self.parts), "created_at": self.created_at}


@lazy_dataclass(frozen=True)
class WorkspaceRecord:
    """A row of ``workspaces``: a workspace made by ``fork``, until ``rm`` removes it."""

    id: str
    name: str
    workflow: str
    workflow_ctx: JsonValue  # the applied workflow's context it was made from
    ctx: JsonValue  # what its create hook returned
    status: WorkspaceStatus
    resources: list[JsonValue]  # machines attached while create ran
    error: str | None
    created_at: str
    updated_at: str
    owner: str | None  # user@host that created it (a team shares one state)
    pid: int | None  # the rig process running its create (and host), while status is creating
    host: str | None
    # What it was made from: {"final": [{"path", "cache_path", "run_id", "node_key"}], "from": ...}
    # (engine/provenance.py); None for a workspace made before rig recorded it.
    provenance: JsonValue
    expires_at: str | None  # removed by the reaper from then on (ISO-8601 UTC)
    idle_stop: int | None  # seconds without use after which the reaper stops it
    reap_at: str | None  # when the reaper looks at it next (expiry, or an idle check)

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class EffectRecord:
    """One row of the effects journal (``effects``): something a provider made, or is making.

    ``requested`` is written before the provider call, under an id the resource carries (a
    directory name, a container label), so it is found even when the reply is lost;
    ``confirmed`` once it exists; ``deleted`` once it is gone. ``owner_kind``/``owner_id`` name
    the run (``run``) or workspace (``workspace``) it was made for.
    """

    id: str
    provider_id: str
    kind: str  # machine | snapshot | container | image | ...
    status: SeenEffectStatus
    resource: dict[str, JsonValue]  # how to find it: provider-specific keys
    owner_kind: str | None
    owner_id: str | None
    error: str | None  # why the last attempt to remove it was inconclusive
    created_at: str
    updated_at: str
    pid: int | None  # the rig process that requested it
    host: str | None

    def identifiers(self) -> set[str]:
        """What refers to it: the effect id and every ``id``/``*_id`` string of its resource."""
        found = {self.id}
        for key, value in self.resource.items():
            if isinstance(value, str) and value and (key == "id" or key.endswith("_id")):
                found.add(value)
        return found

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class ApplyRecord:
    """A row of ``workflow_applies``: the last apply of a workflow."""

    workflow: str
    provider_fingerprint: str
    cached_node_count: int
    node_count: int
    applied_at: str

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class ApplyRun:
    """A row of ``apply_runs``: one apply of a workflow (``rig apply``, or the apply inside ``rig fork``),
    recorded ``running`` before its first task and finished with what each task did; or an entry of a
    workspace's history (no tasks: engine/workspace_history.py).

    The node runs it started carry its id (``NodeRun.apply_id``); ``nodes`` lists every task in plan
    order once it finished (cached ones with the run they reused), empty while it runs.
    """

    id: str  # a run id (rigcli/run_ids.py; short form: ``short_run_id``)
    workflow: str
    command: str  # apply | fork; a workspace entry's: create | rm | op NAME | stop | start
    status: RunStatus
    owner: str | None  # user@host that ran it (a team shares one state)
    pid: int | None  # the rig process running it (a ``running`` apply: whether it is alive)
    host: str | None
    started_at: str
    finished_at: str | None
    node_count: int
    cached_node_count: int | None  # known once it finished
    ran: int | None
    nodes: list[JsonValue]  # [{"path", "run_id", "cached", "scope"}] in plan order, once finished
    error: str | None
    workspace: str | None = None  # the workspace it was for: a fork's, or a workspace entry's (no tasks)

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class OutputChunk:
    """A row of ``node_run_output``: a stretch of one node run's stored output (see state/run_output.py).

    ``data`` is the text, in order; ``streams`` says which stream each stretch of it came from, as
    ``[[stream, length], ...]`` (lengths in characters, adding up to ``len(data)``).
    """

    run_id: str
    seq: int  # position among the run's chunks; gaps are output that was dropped
    streams: list[JsonValue]
    data: str

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = asdict(self)
        return data


@lazy_dataclass(frozen=True)
class OutputPiece:
    """A piece of one stored chunk's ``data`` as its UTF-8 bytes, for copying output out unchanged:
    a chunk comes in one or more pieces, in order, the last one with ``ends_chunk``."""

    seq: int  # the chunk's
    data: bytes
    ends_chunk: bool


@lazy_dataclass(frozen=True)
class LockHolder:
    """Who holds a state database's writer lock, as shown to the processes waiting for it."""

    pid: int  # 0 when the holder could not be identified
    host: str
    user: str  # the OS user running it ("" when unknown)
    command: str
    started_at: str

    def to_json(self) -> dict[str, JsonValue]:
        """``{pid, host, user, command, started_at}``: as lock files and ``rig ls --json`` hold it."""
        return {
            "pid": self.pid,
            "host": self.host,
            "user": self.user,
            "command": self.command,
            "started_at": self.started_at,
        }


@lazy_dataclass(frozen=True)
class Liveness:
    """Whether the rig that recorded a ``running`` run is still running it, and how we know
    (``state/process.py:judge_liveness``)."""

    alive: bool
    evidence: str  # one phrase: "rig pid 12 on box has exited", "rig pid 12 on box holds the state lock"
    holder: LockHolder | None = None  # the lock holder running it, when alive and known


def held_for(holder: LockHolder, *, now: datetime | None = None) -> str:
    """How long the holder has held the lock, as ``12s`` / ``3m 05s`` / ``2h 01m`` ("" when unknown)."""
    if not holder.started_at or parse_timestamp(holder.started_at) == very_old():
        return ""
    seconds = max(0, int(age_seconds(holder.started_at, now=now)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def unknown_holder() -> LockHolder:
    """A holder that could not be identified (its info is missing or being written)."""
    return LockHolder(pid=0, host="", user="", command="", started_at="")


def holder_from_json(data: object) -> LockHolder | None:
    """The holder a lock backend stored as JSON, or None if it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    return LockHolder(
        pid=data["pid"],
        host=str(data.get("host", "")),
        user=str(data.get("user", "")),
        command=str(data.get("command", "")),
        started_at=str(data.get("started_at", "")),
    )


def describe_holder(holder: LockHolder) -> str:
    """``rig apply (pid 12 on box by dev, held for 3s since ...)``: the holder as one phrase for messages."""
    if not holder.pid:
        return "another rig process"
    command = f"rig {holder.command}" if holder.command else "rig"
    by = f" by {holder.user}" if holder.user else ""
    duration = held_for(holder)
    since = f", held for {duration} since {shown_time(holder.started_at)}" if duration else ""
    return f"{command} (pid {holder.pid} on {holder.host or 'an unknown host'}{by}{since})"


__all__ = [
    "VERY_OLD",
    "ApplyRecord",
    "ApplyRun",
    "EffectRecord",
    "FingerprintParts",
    "Liveness",
    "LockHolder",
    "NodeRun",
    "OutputChunk",
    "OutputPiece",
    "Reason",
    "WorkspaceRecord",
    "age_seconds",
    "describe_holder",
    "held_for",
    "holder_from_json",
    "parse_timestamp",
    "shown_time",
    "timestamp",
    "unknown_holder",
    "utc_datetime",
    "utc_now",
]
