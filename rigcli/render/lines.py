"""Turn engine events into short styled lines; shared by the plain renderer and the live view."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, NamedTuple

Event = dict[str, Any]

# Event types whose lines the CLI prints itself (plan tables) or that carry nothing to show.
SILENT = frozenset({"plan.created", "definition.loaded"})
KNOWN_PREFIXES = (
    "workflow.", "node.", "log.", "command.", "artifact.", "interaction.", "workspace.", "plan.", "state.",
)
# Fields every event may carry that say nothing about the provider event itself.
_CONTEXT_FIELDS = frozenset({"type", "node_path", "provider_id", "workflow", "timestamp", "ts"})


class Line(NamedTuple):
    text: str
    style: str = ""


class Glyphs(NamedTuple):
    ok: str
    active: str
    err: str
    arrow: str
    dot: str
    warn: str


UNICODE = Glyphs("✓", "●", "✗", "→", "·", "!")
ASCII = Glyphs("ok", "*", "x", "->", "-", "!")


def glyphs() -> Glyphs:
    encoding = (getattr(sys.stderr, "encoding", None) or "").lower().replace("-", "")
    return UNICODE if encoding.startswith("utf") else ASCII


def format_duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class EventFormatter:
    """Stateful: it times nodes and operations, and joins streamed output into whole lines."""

    def __init__(self, *, debug: bool | None = None) -> None:
        self.debug = os.environ.get("RIG_DEBUG") == "1" if debug is None else debug
        self.g = glyphs()
        self.started: dict[str, float] = {}
        self._partial: dict[tuple[str, str], str] = {}

    def elapsed(self, key: str) -> str:
        start = self.started.get(key)
        return format_duration(time.monotonic() - start) if start is not None else ""

    def output_lines(self, event: Event) -> list[str]:
        """Whole lines of a command's streamed chunk; a trailing partial line waits for the next chunk."""
        stream = str(event.get("stream", "stdout"))
        key = (str(event.get("command_id") or ""), stream)
        text = self._partial.pop(key, "") + str(event.get("data", ""))
        *complete, tail = text.split("\n")
        if tail:
            self._partial[key] = tail
        return [line.rstrip("\r") for line in complete]

    def flush(self, owner: str) -> list[str]:
        """Partial lines still held for one command id."""
        keys = [key for key in self._partial if key[0] == owner]
        return [self._partial.pop(key) for key in keys]

    def lines(self, event: Event) -> list[Line]:
        kind = str(event.get("type", ""))
        if kind in SILENT:
            return []
        method = getattr(self, "_" + kind.replace(".", "_"), None)
        if method is not None:
            result: list[Line] = method(event)
            return result
        if not kind.startswith(KNOWN_PREFIXES):
            return [self.provider_line(event)]
        return []

    def provider_line(self, event: Event) -> Line:
        details = " ".join(
            f"{key}={value}" for key, value in event.items()
            if key not in _CONTEXT_FIELDS and isinstance(value, (str, int, float)) and not isinstance(value, bool)
        )
        return Line(f"    {event.get('type')} {details}".rstrip(), "cyan")

    def _state_warning(self, event: Event) -> list[Line]:
        return [Line(f"{self.g.warn} {event.get('message')}", "yellow")]

    def _state_lock_waiting(self, event: Event) -> list[Line]:
        holder = event.get("holder")
        if isinstance(holder, dict) and holder.get("pid"):
            host = holder.get("host") or "an unknown host"
            who = f"rig {holder.get('command') or ''} (pid {holder['pid']} on {host})"
        else:
            who = "another rig process"
        return [Line(f"{self.g.active} waiting for the state lock held by {who}", "yellow")]

    def _workflow_apply_started(self, event: Event) -> list[Line]:
        self.started["workflow:" + str(event.get("workflow"))] = time.monotonic()
        return [Line(f"{self.g.active} apply {event.get('workflow')}", "bold")]

    def _workflow_apply_completed(self, event: Event) -> list[Line]:
        total = int(event.get("node_count") or 0)
        cached = int(event.get("cached_node_count") or 0)
        took = self.elapsed("workflow:" + str(event.get("workflow")))
        suffix = f" in {took}" if took else ""
        return [Line(f"{self.g.ok} {event.get('workflow')}: ran {total - cached}, cached {cached}{suffix}", "green")]

    def _node_cached(self, event: Event) -> list[Line]:
        return [Line(f"  {self.g.ok} {event.get('node_path')}  cached", "dim")]

    def _node_started(self, event: Event) -> list[Line]:
        self.started[str(event.get("node_path"))] = time.monotonic()
        return [Line(f"  {self.g.active} {event.get('node_path')}", "cyan")]

    def _node_completed(self, event: Event) -> list[Line]:
        path = str(event.get("node_path"))
        return [Line(f"  {self.g.ok} {path}  {self.elapsed(path)}".rstrip(), "green")]

    def _node_failed(self, event: Event) -> list[Line]:
        path = str(event.get("node_path"))
        error = str(event.get("error") or "failed").strip().splitlines()
        message = error[0] if error else "failed"
        took = self.elapsed(path)
        after = f" after {took}" if took else ""
        return [Line(f"  {self.g.err} {path}  failed{after}: {message}", "red")]

    def _log_output(self, event: Event) -> list[Line]:
        """Handler print()/logging output: the engine sends it a whole line at a time."""
        stream = str(event.get("stream", "info"))
        if stream == "debug" and not self.debug:
            return []
        style, mark = {"warn": ("yellow", f"{self.g.warn} "), "debug": ("dim", "debug ")}.get(stream, ("", ""))
        return [Line(f"    {mark}{line}", style) for line in str(event.get("data", "")).splitlines() if line.strip()]

    def _command_started(self, event: Event) -> list[Line]:
        return [Line(f"    $ {event.get('command')}", "dim")]

    def _command_output(self, event: Event) -> list[Line]:
        return [Line(f"    {line}") for line in self.output_lines(event)]

    def _command_completed(self, event: Event) -> list[Line]:
        result = [Line(f"    {line}") for line in self.flush(str(event.get("command_id") or ""))]
        code = event.get("exit_code")
        if code not in (0, None):
            label = event.get("name") or event.get("command_id") or "command"
            result.append(Line(f"    {label} exited {code}", "yellow"))
        if event.get("truncated_bytes"):
            result.append(Line(f"    ({event['truncated_bytes']} bytes of output not kept)", "dim"))
        return result

    def _artifact_created(self, event: Event) -> list[Line]:
        artifact = event.get("artifact") or {}
        if isinstance(artifact, dict):
            return [Line(f"    + {artifact.get('provider')}:{artifact.get('kind')}", "dim")]
        return []

    def _interaction_awaiting_user(self, event: Event) -> list[Line]:
        lines = [Line(f"  {self.g.arrow} waiting on {event.get('title')}", "yellow")]
        lines += [Line(f"    {event[key]}") for key in ("url", "instructions") if event.get(key)]
        return lines

    def _interaction_completed(self, event: Event) -> list[Line]:
        return [Line(f"  {self.g.ok} {event.get('title')} completed", "green")]

    def _workspace_create_started(self, event: Event) -> list[Line]:
        return [Line(f"{self.g.active} creating workspace {event.get('workspace')}", "bold")]

    def _workspace_ready(self, event: Event) -> list[Line]:
        return [Line(f"{self.g.ok} {event.get('workspace')} ready", "green")]

    def _workspace_remove_started(self, event: Event) -> list[Line]:
        return [Line(f"{self.g.active} removing workspace {event.get('workspace')}", "bold")]

    def _workspace_remove_completed(self, event: Event) -> list[Line]:
        return [Line(f"{self.g.ok} removed {event.get('workspace')}", "green")]

    def _workspace_operation_started(self, event: Event) -> list[Line]:
        self.started[f"op:{event.get('workspace')}/{event.get('operation')}"] = time.monotonic()
        return [Line(f"{self.g.active} {event.get('operation')} on {event.get('workspace')}", "bold")]

    def _workspace_operation_completed(self, event: Event) -> list[Line]:
        took = self.elapsed(f"op:{event.get('workspace')}/{event.get('operation')}")
        return [Line(f"{self.g.ok} {event.get('operation')} on {event.get('workspace')}  {took}".rstrip(), "green")]


__all__ = ["ASCII", "UNICODE", "EventFormatter", "Glyphs", "Line", "format_duration", "glyphs"]
