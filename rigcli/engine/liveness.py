"""Live status of workspaces: each provider asked about the machines the effects journal says it made.

What a workspace has is the journal's (its live effects, owned by the record's id), never a copy.
Providers answer through ``SupportsStatus.probe``, each with all of its resources at once, every
provider on a thread of its own; ``probe_records`` waits at most ``PROBE_SECONDS`` for all of them
together, so one daemon that does not answer makes its own workspaces ``unknown`` and slows
nothing else past that bound. A workspace is as alive as its least alive machine
(``engine/live_summary.py``, which ``rig ls`` answered from the cache shares).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from rigcli.authoring.values import ProviderDefinition
from rigcli.engine.live_summary import Resource, resources_in, summarize_machines
from rigcli.engine.project import Project
from rigcli.errors import RigError, describe_exception
from rigcli.provider_api import EffectEntry, LiveStatus, ProviderController, SupportsStatus
from rigcli.records import WorkspaceRecord
from rigcli.speed.awaitables import isawaitable
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")


PROBE_SECONDS = 2.0  # the longest `rig ls` waits for every provider together


async def controllers_by_provider(project: Project, workflows: Iterable[str]) -> dict[str, list[ProviderController]]:
    """Every controller the given workflows' scopes define, by provider id (several definitions of
    one provider, e.g. two Docker hosts, each get asked)."""
    hub = project.loaded.hub
    found: dict[str, list[ProviderController]] = {}
    seen: set[int] = set()
    for name in workflows:
        workflow = project.workflows.get(name)
        if workflow is None:
            continue
        for _, definition, controller in await hub.controllers(workflow.all_scopes()):
            if id(controller) not in seen:
                seen.add(id(controller))
                found.setdefault(definition.provider_id, []).append(controller)
    return found


async def controllers_for(
    project: Project, known: dict[str, list[ProviderController]], provider_id: str
) -> list[ProviderController]:
    """The controllers for ``provider_id``: the project's, else one made from a bare definition."""
    if provider_id not in known:
        try:
            known[provider_id] = [await project.loaded.hub.controller(ProviderDefinition(provider_id))]
        except RigError:
            known[provider_id] = []
    return known[provider_id]


async def _settle(answer: Awaitable[Mapping[str, LiveStatus]]) -> Mapping[str, LiveStatus]:
    return await answer


class _Probe(threading.Thread):
    """One controller's probe of its resources, on a thread of its own."""

    def __init__(self, controller: SupportsStatus, entries: list[EffectEntry]) -> None:
        super().__init__(name="rig-probe", daemon=True)  # one that never answers must not keep rig alive
        self.controller = controller
        self.entries = entries
        self.answers: Mapping[str, LiveStatus] | None = None
        self.error: str | None = None

    def run(self) -> None:
        try:
            answer = self.controller.probe(self.entries)
            if isawaitable(answer):
                answer = asyncio.run(_settle(answer))
            self.answers = dict(answer)
        except Exception as exc:  # a provider's failure is its resources' "unknown", not rig's
            self.error = str(exc) if isinstance(exc, RigError) else describe_exception(exc)


@lazy_dataclass(frozen=True)
class Answer:
    """A provider's answer about one machine, and the controller that gave it (to act on it)."""

    status: LiveStatus
    controller: ProviderController | None = None


async def probe_resources(
    project: Project, workflows: Iterable[str], resources: Sequence[Resource], *, timeout: float = PROBE_SECONDS
) -> dict[str, Answer]:
    """Each machine among ``resources`` (by effect id) as its provider sees it; non-machines are left out.

    A definite answer (running, stopped, missing) from any controller of the provider wins over
    ``unknown`` (a controller on another Docker host cannot tell). What a provider could not answer
    within ``timeout``, or failed to, is ``unknown`` with why.
    """
    known = await controllers_by_provider(project, workflows)
    by_provider: dict[str, list[EffectEntry]] = {}
    for resource in resources:
        by_provider.setdefault(resource.provider_id, []).append(resource.entry)
    probes: list[_Probe] = []
    answers: dict[str, Answer] = {}
    for provider_id, entries in by_provider.items():
        controllers = await controllers_for(project, known, provider_id)
        probing = [item for item in controllers if isinstance(item, SupportsStatus)]
        if not probing:
            for entry in entries:
                answers[entry["id"]] = Answer(LiveStatus("unknown", f"the {provider_id} provider cannot report status"))
        probes += [_Probe(controller, entries) for controller in probing]
    deadline = time.monotonic() + timeout
    for probe in probes:
        probe.start()
    for probe in probes:
        probe.join(max(0.0, deadline - time.monotonic()))
    for probe in probes:
        controller: ProviderController = probe.controller  # type: ignore[assignment]
        if probe.answers is None:
            why = probe.error or f"no answer within {timeout:g}s"
            for entry in probe.entries:
                _keep_best(answers, entry["id"], Answer(LiveStatus("unknown", why), controller))
            continue
        for effect_id, status in probe.answers.items():
            _keep_best(answers, effect_id, Answer(status, controller))
    return answers


def _keep_best(answers: dict[str, Answer], effect_id: str, answer: Answer) -> None:
    previous = answers.get(effect_id)
    if previous is None or (previous.status.state == "unknown" and answer.status.state != "unknown"):
        answers[effect_id] = answer


def resources_of(record: WorkspaceRecord) -> list[Resource]:
    """The workspace's live effects (requested or confirmed), in journal order."""
    return resources_in(record.resources)


def summarize(record: WorkspaceRecord, answers: Mapping[str, Answer]) -> LiveStatus:
    """The workspace's state: its least alive machine's, with that machine's detail."""
    pairs = {effect_id: (answer.status.state, answer.status.detail) for effect_id, answer in answers.items()}
    state, detail = summarize_machines(record.resources, record.status, pairs)
    return LiveStatus(state, detail)  # type: ignore[arg-type]  # one of the states it was given


async def probe_records(
    project: Project, records: Sequence[WorkspaceRecord], *, timeout: float = PROBE_SECONDS
) -> dict[str, LiveStatus]:
    """Each workspace's live status, by record id, probed together (see the module docstring)."""
    resources = [resource for record in records for resource in resources_of(record)]
    answers = await probe_resources(project, {record.workflow for record in records}, resources, timeout=timeout)
    return {record.id: summarize(record, answers) for record in records}


__all__ = ["PROBE_SECONDS", "Answer", "Resource", "probe_records", "probe_resources", "resources_of", "summarize"]
