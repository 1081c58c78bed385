"""A workspace's life after fork: its live status, stop and start, and a program run inside it.

``Lifecycle`` answers ``rig ls``'s probe, ``rig stop``/``rig start`` (``SupportsPower``, each
machine's ``stopping``/``starting`` journaled before the provider is asked and the outcome
after), the check that an operation, ``rig shell`` or ``rig exec`` does not run against a stopped
or vanished workspace (``--start`` starts it first), and ``rig shell``/``rig exec`` themselves
(``SupportsInteractive``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rigcli.engine.hooks import run_hook
from rigcli.engine.invoke import NamedContext, freeze
from rigcli.engine.liveness import (
    PROBE_SECONDS,
    Answer,
    Resource,
    controllers_by_provider,
    controllers_for,
    probe_records,
    probe_resources,
    resources_of,
    summarize,
)
from rigcli.engine.project import Project
from rigcli.engine.providers import maybe_await
from rigcli.engine.workspace_history import recorded
from rigcli.engine.workspaces import Workspaces
from rigcli.errors import RigError, TaskError, UnsupportedError, describe_exception
from rigcli.graph import CompiledWorkflow, HookSpec
from rigcli.provider_api import LiveStatus, ProviderController, SupportsInteractive, SupportsPower
from rigcli.records import WorkspaceRecord
from rigcli.statuses import LiveState


def _unusable(name: str, live: LiveStatus) -> RigError | None:
    """The one line for a workspace nothing can run in now (stopped, or its machine gone)."""
    if live.state == "stopped":
        return RigError(f"Workspace {name} is stopped ({live.detail}); run rig start {name}, or pass --start")
    if live.state == "missing":
        return RigError(f"Workspace {name} is missing: {live.detail}; rig rm {name} forgets it")
    return None


class Lifecycle:
    """Live status, stop and start, and attaching to a workspace's machine."""

    def __init__(self, project: Project, workspaces: Workspaces) -> None:
        self.project = project
        self.workspaces = workspaces

    async def probe_workspaces(
        self, records: Sequence[WorkspaceRecord], *, timeout: float | None = None
    ) -> dict[str, LiveStatus]:
        return await probe_records(self.project, records, timeout=timeout or PROBE_SECONDS)

    async def _answers(self, workflow: CompiledWorkflow, record: WorkspaceRecord) -> dict[str, Answer]:
        return await probe_resources(self.project, [workflow.name], resources_of(record))

    async def require_running(self, workflow: CompiledWorkflow, record: WorkspaceRecord, *, start: bool) -> None:
        """Refuse, in one line, a workspace that is stopped (unless ``start``: then start it) or missing.

        ``unknown`` (a daemon that does not answer) is let through: what runs next says why it fails.
        """
        live = summarize(record, await self._answers(workflow, record))
        if live.state == "stopped" and start:
            await self.set_power(record.name, workflow.name, stop=False)
            return
        problem = _unusable(record.name, live)
        if problem is not None:
            raise problem

    async def set_power(self, name: str, workflow: str | None, *, stop: bool) -> LiveStatus:
        """Stop (or start) every machine of the workspace; its live status afterwards."""
        verb, target = ("stop", "stopped") if stop else ("start", "running")
        selected, record = self.workspaces.find_workspace(name, workflow)
        if record.status in ("creating", "removing"):
            raise RigError(f"Workspace {name} is {record.status}; {verb} it once that is done")
        answers = await self._answers(selected, record)
        machines = [item for item in resources_of(record) if item.entry["id"] in answers]
        if not machines:
            raise RigError(f"Workspace {name} has no machine to {verb}")
        actions: list[tuple[Resource, SupportsPower]] = []
        for machine in machines:
            answer = answers[machine.entry["id"]]
            problem = _power_problem(name, verb, machine, answer)
            if problem is not None:
                raise problem
            power = await self._power_controller(selected, machine, answer.controller)
            if power is None:  # said even when it already is as asked: there is nothing to stop or start
                raise UnsupportedError(
                    f"Workspace {name} uses the {machine.provider_id} provider, which has nothing to {verb}"
                )
            if answer.status.state != target:
                actions.append((machine, power))
        if actions:  # an entry of the workspace's history, with what its on_start hook printed
            switching = self._switch(selected, name, actions, stop=stop)
            await recorded(self.project, switching, workflow=selected.name, workspace=name, command=verb)
        _, record = self.workspaces.find_workspace(name, selected.name)
        return summarize(record, await self._answers(selected, record))

    async def _switch(
        self, selected: CompiledWorkflow, name: str, actions: list[tuple[Resource, SupportsPower]], *, stop: bool
    ) -> None:
        """Stop (or start) these machines, each journaled before the provider is asked; after a start,
        the workflow's workspace(on_start=...)."""
        verb = "stop" if stop else "start"
        store = self.project.store
        for machine, power in actions:
            with self.project.stores.writing(verb):
                store.note_effect_power(machine.entry["id"], "stopping" if stop else "starting")
            await maybe_await(power.stop(machine.entry) if stop else power.start(machine.entry))
            with self.project.stores.writing(verb):
                store.note_effect_power(machine.entry["id"], "stopped" if stop else "started")
        if not stop:
            _, record = self.workspaces.find_workspace(name, selected.name)
            await self._workspace_hook(selected, record, selected.start_hook)

    async def _workspace_hook(self, selected: CompiledWorkflow, record: WorkspaceRecord, hook: HookSpec | None) -> None:
        """Run ``on_start``/``on_attach`` for a ready workspace; its failure is the command's (exit 1)."""
        if hook is None or record.status != "ready":
            return

        session = await self.project.session(selected, "require")
        try:
            await run_hook(
                self.project,
                selected,
                session,
                hook,
                node_path=f"workspace:{record.name}:{hook.label}",
                workflow_ctx=record.workflow_ctx,
                workspace=NamedContext(record.name, freeze(record.ctx)),
                owner=("workspace", record.id),
            )
        except RigError:
            raise
        except Exception as exc:
            raise TaskError(f"Workspace {record.name} {hook.label} failed: {describe_exception(exc)}") from exc

    async def _power_controller(
        self, workflow: CompiledWorkflow, machine: Resource, answered: ProviderController | None
    ) -> SupportsPower | None:
        if isinstance(answered, SupportsPower):
            return answered
        known = await controllers_by_provider(self.project, [workflow.name])
        found = await controllers_for(self.project, known, machine.provider_id)
        return next((item for item in found if isinstance(item, SupportsPower)), None)

    async def attach(
        self,
        name: str,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        workflow: str | None = None,
        start: bool = False,
    ) -> int:
        """Run ``argv`` (None: a shell) in the workspace's machine on rig's own stdio; its exit code."""
        selected, record = self.workspaces.find_workspace(name, workflow)
        answers = await self._answers(selected, record)
        live = summarize(record, answers)
        if live.state == "stopped" and start:
            live = await self.set_power(name, selected.name, stop=False)
            answers = await self._answers(selected, record)
        problem = _unusable(name, live)
        if problem is not None:
            raise problem
        machines = [item for item in resources_of(record) if item.entry["id"] in answers]
        if not machines:
            raise RigError(f"Workspace {name} has no machine to run in ({live.detail})")
        if argv is None:  # a shell session: the workflow's workspace(on_attach=...) first
            await self._workspace_hook(selected, record, selected.attach_hook)
        # The first machine that runs (journal order: the one its create made first).
        order: dict[LiveState, int] = {"running": 0, "unknown": 1, "stopped": 2, "missing": 3}
        machine = min(machines, key=lambda item: order[answers[item.entry["id"]].status.state])
        answered = answers[machine.entry["id"]].controller
        interactive = answered if isinstance(answered, SupportsInteractive) else None
        if interactive is None:
            known = await controllers_by_provider(self.project, [selected.name])
            candidates = await controllers_for(self.project, known, machine.provider_id)
            interactive = next((item for item in candidates if isinstance(item, SupportsInteractive)), None)
        if interactive is None:
            raise UnsupportedError(
                f"Workspace {name} uses the {machine.provider_id} provider, which cannot run a shell or "
                "a command in its machine"
            )
        code = await maybe_await(interactive.attach(machine.entry, argv, tty=tty, env=env, cwd=None))
        return int(code)

    async def session_started(self, name: str, workflow: str | None = None) -> None:
        """The hook point of every interactive session (``rig shell`` in ``attach``; ``rig ssh``, once
        per session): the workflow's ``workspace(on_attach=...)``, for a ready workspace."""
        selected, record = self.workspaces.find_workspace(name, workflow)
        await self._workspace_hook(selected, record, selected.attach_hook)


def _power_problem(name: str, verb: str, machine: Resource, answer: Answer) -> RigError | None:
    status = answer.status
    if status.state == "missing":
        return RigError(f"Workspace {name} is missing: {status.detail}; rig rm {name} forgets it")
    if status.state == "unknown":
        return RigError(f"Cannot {verb} workspace {name}: {status.detail}")
    return None


__all__ = ["Lifecycle"]
