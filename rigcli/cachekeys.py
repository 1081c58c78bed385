"""Cache keys and the reuse predicate's pure checks, with their reason codes and messages.

Inputs, by key (each a ``tagged_hash``; bump the tag when an input changes meaning):

- ``task-v1``: cache path, task name, handler fingerprint (``handler-v1``, see
  rigcli.fingerprint), the configure stack (ordered list, root first), the output schema's
  identity, and ``version``. Not the workflow name (a lookup column), not ``cache_ttl``
  (checked on its own so changing only the TTL keeps a fresh run), not provider config.
- ``provider-v1``: for the providers in the task's scope, by scope name: provider id,
  resolved config (secrets replaced by a keyed HMAC), plugin identity; plus provider check
  fingerprints. A task with no providers in scope gets a constant (``provider-v1`` of nothing).
- ``fragment-v1``: a global fragment's node tree (kinds, names, configure, handler
  fingerprints, output identity, version, cache_ttl) — never provider config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from rigcli.authoring.nodes import Node, OutputSchema, ParallelNode, SequenceNode, TaskNode
from rigcli.graph import TaskSpec
from rigcli.jsonutil import JsonValue, canonical_json, tagged_hash, to_plain_json
from rigcli.records import NodeRun, Reason, age_seconds
from rigcli.statuses import REASON_MESSAGES, ReasonCode

Fingerprint = Callable[[object], str]  # the handler fingerprint of any code object (see rigcli.fingerprint)


def reason(code: ReasonCode, detail: str | None = None) -> Reason:
    """The reason ``code`` with its one message (codes and messages: rigcli/statuses.py)."""
    return Reason(code, REASON_MESSAGES[code], detail)


CACHED = reason("cached")


def output_identity(output: OutputSchema | None, fingerprint: Fingerprint) -> JsonValue:
    if output is None:
        return None
    schema = getattr(output, "model_json_schema", None)
    if callable(schema):
        return {"kind": "pydantic", "name": getattr(output, "__qualname__", ""), "schema": to_plain_json(schema())}
    parse = getattr(output, "parse", None)
    code = getattr(parse, "__func__", parse)
    return {"kind": "parse", "name": type(output).__qualname__, "parse": fingerprint(code)}


def task_key(task: TaskSpec, fingerprint: Fingerprint) -> str:
    node = task.node
    return tagged_hash(
        "task-v1",
        {
            "path": task.cache_path,
            "name": node.name,
            "handler": fingerprint(node.handler),
            "config": [to_plain_json(level) for level in task.config_stack],
            "output": output_identity(node.output, fingerprint),
            "version": node.version,
        },
    )


def describe_fragment(node: Node, fingerprint: Fingerprint) -> JsonValue:
    config = to_plain_json(node.config)
    if isinstance(node, TaskNode):
        return {
            "kind": "task",
            "name": node.name,
            "config": config,
            "handler": fingerprint(node.handler),
            "output": output_identity(node.output, fingerprint),
            "version": node.version,
            "cache_ttl": node.cache_ttl,
            "scope": node.cache_scope,
        }
    if isinstance(node, ParallelNode):
        return {
            "kind": "parallel",
            "config": config,
            "scope": node.cache_scope,
            "branches": [[key, describe_fragment(branch, fingerprint)] for key, branch in node.branches],
        }
    assert isinstance(node, SequenceNode)
    return {
        "kind": "sequence",
        "name": node.name,
        "config": config,
        "scope": node.cache_scope,
        "children": [describe_fragment(child.node, fingerprint) for child in node.children],
    }


def fragment_hash(node: Node, fingerprint: Fingerprint) -> str:
    return tagged_hash("fragment-v1", describe_fragment(node, fingerprint))


def provider_fingerprint(providers: Mapping[str, JsonValue], checks: Sequence[JsonValue]) -> str:
    """The ``provider-v1`` hash of a scope: each provider described by scope name, plus check fingerprints."""
    return tagged_hash("provider-v1", {"providers": dict(providers), "checks": list(checks)})


def judge_run(
    run: NodeRun, *, key: str, provider_fp: str, upstream: Sequence[str], ttl: float | None, now: datetime
) -> Reason | None:
    """The first failing pure condition for reusing ``run``, or None if all hold."""
    if run.node_key != key:
        return reason("task-changed")
    if run.provider_fingerprint != provider_fp:
        return reason("provider-changed")
    if canonical_json(list(run.upstream_run_ids)) != canonical_json(list(upstream)):
        return reason("upstream-changed")
    if run.invalidated:
        return reason("invalidated")
    # An unreadable created_at reads as very old: expired, never a false hit.
    if ttl is not None and (ttl <= 0 or age_seconds(run.created_at, now=now) > ttl):
        return reason("expired", f"created {run.created_at}")
    return None


def judge_in_doubt(
    running: Sequence[NodeRun], succeeded: Sequence[NodeRun], *, left_by_dead_process: Callable[[NodeRun], bool]
) -> Reason | None:
    """``in-doubt`` when the node's newest run (both lists newest first) was cut off by a dead process.

    Such a run is never reused; it names why the node is pending instead of "no previous run".
    An in-doubt run older than the newest success is history and judges nothing.
    """
    if not running or not left_by_dead_process(running[0]):
        return None
    if succeeded and succeeded[0].created_at >= running[0].created_at:
        return None
    return reason("in-doubt", f"run {running[0].id} started {running[0].created_at}")


__all__ = [
    "CACHED",
    "REASON_MESSAGES",
    "describe_fragment",
    "fragment_hash",
    "judge_in_doubt",
    "judge_run",
    "output_identity",
    "provider_fingerprint",
    "reason",
    "task_key",
]
