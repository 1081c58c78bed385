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
from typing import TYPE_CHECKING

from rigcli.authoring.nodes import Node, OutputSchema, ParallelNode, SequenceNode, TaskNode
from rigcli.fingerprint.parts import PartHashes, changes, part_hash
from rigcli.graph import TaskSpec
from rigcli.jsonutil import JsonValue, tagged_hash, to_plain_json
from rigcli.records import Liveness, LockHolder, NodeRun, Reason, age_seconds, describe_holder, shown_time
from rigcli.statuses import REASON_MESSAGES, ReasonCode

if TYPE_CHECKING:
    from datetime import datetime

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


def task_parts(task: TaskSpec, handler_parts: Callable[[object], PartHashes], fingerprint: Fingerprint) -> PartHashes:
    """The inputs of ``task_key``, each hashed alone (``fingerprint/parts.py``): what a run stores
    so that a later ``task-changed`` can say which one changed. Config keys are named, never valued."""
    node = task.node
    parts = dict(handler_parts(node.handler))
    stack = [to_plain_json(level) for level in task.config_stack]
    unset: JsonValue = {"t": "unset"}
    for key in sorted({key for level in stack if isinstance(level, dict) for key in level}):
        parts[f"config:{key}"] = part_hash(
            [level.get(key, unset) if isinstance(level, dict) else unset for level in stack]
        )
    parts["config-stack"] = part_hash(len(stack))  # where each key is set is in its own part
    parts["output"] = part_hash(output_identity(node.output, fingerprint))
    parts["version"] = part_hash(node.version)
    parts["path"] = part_hash([task.cache_path, node.name])
    return parts


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


def provider_parts(providers: Mapping[str, JsonValue], checks: Sequence[JsonValue]) -> PartHashes:
    """The inputs of ``provider_fingerprint``, per provider: its description and its checks."""
    parts = {f"provider:{name}": part_hash(description) for name, description in providers.items()}
    by_provider: dict[str, list[JsonValue]] = {}
    for check in checks:
        name = check.get("provider_name") if isinstance(check, dict) else None
        by_provider.setdefault(str(name), []).append(check)
    parts.update({f"checks:{name}": part_hash(found) for name, found in by_provider.items()})
    return parts


def name_the_change(why: Reason, old: PartHashes | None, new: PartHashes) -> Reason:
    """``task-changed``/``provider-changed`` naming the component that changed, from the parts the
    old run stored (``old``; None for runs recorded before parts were) and the current ones."""
    found = changes(old, new) if old else []
    if not found:
        return why
    (first, happened), more = found[0], found[1:]
    message = f"{first} {happened}" + (f" (and {len(more)} more)" if more else "")
    detail = "; ".join(f"{name} {verb}" for name, verb in found) if more else why.detail
    return Reason(why.code, message, detail, component=first)


def judge_run(
    run: NodeRun, *, key: str, provider_fp: str, upstream: Sequence[str], ttl: float | None, now: datetime | None
) -> Reason | None:
    """The first failing pure condition for reusing ``run``, or None if all hold (``now``: the clock
    a ``ttl`` is judged by; None reads it when needed)."""
    if run.node_key != key:
        return reason("task-changed")
    if run.provider_fingerprint != provider_fp:
        return reason("provider-changed")
    if list(run.upstream_run_ids) != list(upstream):  # run ids are strings: equal lists, equal JSON
        return reason("upstream-changed")
    if run.invalidated:
        return reason("invalidated")
    # An unreadable created_at reads as very old: expired, never a false hit.
    if ttl is not None and (ttl <= 0 or age_seconds(run.created_at, now=now) > ttl):
        return reason("expired", f"created {shown_time(run.created_at)}")
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


def _newer(run: NodeRun, than: NodeRun) -> bool:
    return (run.created_at, run.id) > (than.created_at, than.id)


def judge_attempt(
    attempts: Sequence[NodeRun], succeeded: Sequence[NodeRun], *, liveness: Callable[[NodeRun], Liveness]
) -> Reason | None:
    """Why a pending node's newest run did not leave a result, when that run is newer than its
    newest success: ``running-elsewhere``, ``in-doubt``, ``previous-run-failed`` or
    ``previous-run-interrupted``; None when there is no such run (the usual reasons apply).

    ``attempts``: the node's runs of other processes that did not succeed (running, failed,
    interrupted, abandoned), and ``succeeded`` its successes, each newest first. ``liveness``
    judges a ``running`` one (``state/process.py:judge_liveness``). A run that ended and was then
    invalidated (``rig cache invalidate``) is history: the node is pending because of the
    invalidation, not because of how that run ended.
    """
    attempts = [run for run in attempts if run.status == "running" or not run.invalidated]
    if not attempts or (succeeded and not _newer(attempts[0], succeeded[0])):
        return None
    newest = attempts[0]
    started = f"run {newest.id} started {shown_time(newest.created_at)}"
    if newest.status == "running":
        state = liveness(newest)
        if not state.alive:
            return reason("in-doubt", f"{started}; {state.evidence}")
        holder = state.holder or LockHolder(
            pid=newest.pid or 0, host=newest.host or "", user="", command="", started_at=""
        )
        return Reason(
            "running-elsewhere", f"{REASON_MESSAGES['running-elsewhere']}: {describe_holder(holder)}", started
        )
    if newest.status == "abandoned":  # closed by a later rig that proved its process gone
        return reason("in-doubt", f"{started}; {newest.error or 'abandoned'}")
    if newest.status == "failed":
        return reason("previous-run-failed", f"{started}: {newest.error}" if newest.error else started)
    if newest.status == "interrupted":
        return reason("previous-run-interrupted", started)
    return None


__all__ = [
    "CACHED",
    "REASON_MESSAGES",
    "describe_fragment",
    "fragment_hash",
    "judge_attempt",
    "judge_in_doubt",
    "judge_run",
    "name_the_change",
    "output_identity",
    "provider_fingerprint",
    "provider_parts",
    "reason",
    "task_key",
    "task_parts",
]
