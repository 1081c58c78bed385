"""Expiry: workspaces removed once their ``ttl`` is over, stopped once unused for ``idle_stop``.

Every record says when the reaper should look at it next (``reap_at``, indexed): its
``expires_at``, or the next idle check. Every rig command asks, in one query, whether anything
is due (``due``); only then are providers loaded and the writer lock tried. A command that
cannot take the lock at once skips reaping (it never waits for it), and so does any command
reading the state (``rig plan``, ``rig ls``): reads never block. ``rig reap`` is the same, for
cron, waiting for the lock like any writer, and retrying every ``reap-failed`` workspace.

- expired: removed as ``rig rm`` removes it (its remove hook if its create completed, then what
  the journal says was made for it). A create still running is never due.
- idle: its provider says when each machine was last used (``SupportsLastUse``); one unused for
  ``idle_stop`` is stopped (``SupportsPower.stop``); otherwise the next check is when it would
  be. A provider that cannot tell (or stop) leaves the workspace alone: ``idle_stop`` applies
  where the provider can say.
- a removal or stop that fails marks the workspace ``reap-failed`` with the error (``rig ls``
  shows it), and the next automatic try is ``RETRY_SECONDS`` later; never silently dropped.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from rigcli.engine.effects import as_entry
from rigcli.engine.project import Project
from rigcli.engine.providers import maybe_await
from rigcli.engine.reap_report import ReapItem, ReapReport
from rigcli.engine.reconcile import controller_of
from rigcli.engine.session import ProviderSession
from rigcli.engine.workspaces import Workspaces, error_message
from rigcli.errors import RigError, StateLockedError
from rigcli.events import WorkspaceReaped
from rigcli.provider_api import ProviderController, SupportsLastUse
from rigcli.records import EffectRecord, WorkspaceRecord, parse_timestamp, shown_time, timestamp, utc_datetime, utc_now
from rigcli.state.effects import LIVE_EFFECT_STATUSES
from rigcli.statuses import WorkspaceStatus

RETRY_SECONDS = 600  # after a failed reap, when the next command tries again (rig reap: at once)


class Reaper:
    """Removes expired workspaces and stops idle ones."""

    def __init__(self, project: Project, workspaces: Workspaces) -> None:
        self.project = project
        self.workspaces = workspaces

    def due(self) -> list[WorkspaceRecord]:
        """What is due now: one indexed query, nothing loaded (every command asks this)."""
        return self.project.store.due_workspaces(utc_now())

    async def reap(self, *, dry_run: bool = False, implicit: bool = False) -> ReapReport:
        """Remove or stop what is due. ``implicit`` (any command): only if the writer lock is free at
        once, and only what is due by its schedule; otherwise (``rig reap``) wait for the lock and
        retry every ``reap-failed`` workspace too."""
        report = ReapReport(dry_run=dry_run)
        store = self.project.store
        if implicit and not self.due():
            return report
        if dry_run:
            for record in store.due_workspaces(utc_now(), failed_too=True):
                await self._judge(record, report, act=False)
            return report
        try:
            with self.project.stores.writing("reap", wait=not implicit):
                for record in store.due_workspaces(utc_now(), failed_too=not implicit):
                    await self._judge(record, report, act=True)
        except StateLockedError:
            if not implicit:
                raise
        return report

    async def _judge(self, record: WorkspaceRecord, report: ReapReport, *, act: bool) -> None:
        now = utc_datetime()
        expires = parse_timestamp(record.expires_at) if record.expires_at else None
        if expires is not None and expires <= now:
            item = ReapItem(
                record.name, record.workflow, "remove", "expired", f"expired at {shown_time(record.expires_at)}"
            )
            if act:
                await self._remove(record, item, report)
            else:
                report.reaped.append(item)
            return
        if record.idle_stop:
            await self._idle(record, report, act=act)
            return
        if act:  # nothing to do (the schedule moved): look again when it expires
            self._reschedule(record, None)

    async def _remove(self, record: WorkspaceRecord, item: ReapItem, report: ReapReport) -> None:
        workflow = self.project.workflows.get(record.workflow)
        try:
            if workflow is None:
                raise RigError(f"workflow {record.workflow} is no longer defined in rig_config.py")
            await self.workspaces.remove_held(workflow, record)
        except Exception as exc:
            self._failed(record, item, error_message(exc), report)
            return
        report.reaped.append(item)
        self.project.emit(
            WorkspaceReaped(workflow=record.workflow, workspace=record.name, action="removed", detail=item.detail)
        )

    async def _idle(self, record: WorkspaceRecord, report: ReapReport, *, act: bool) -> None:
        assert record.idle_stop is not None
        workflow = self.project.workflows.get(record.workflow)
        if workflow is None:
            return
        session = await self.project.session(workflow, "plan")
        item = ReapItem(record.name, record.workflow, "stop", "idle", "")
        try:
            machines = await self._last_uses(session, record)
        except Exception as exc:
            if act:
                self._failed(record, item, f"could not tell when it was last used: {error_message(exc)}", report)
            return
        now = utc_datetime()
        idle = [(effect, controller, used) for effect, controller, used in machines if used is not None]
        if not idle:  # nothing it can stop (stopped already, or no provider that can tell)
            if act:
                self._reschedule(record, now + timedelta(seconds=record.idle_stop))
            return
        last = max(parse_timestamp(used) for _, _, used in idle)
        if now - last < timedelta(seconds=record.idle_stop):
            if act:
                self._reschedule(record, last + timedelta(seconds=record.idle_stop))
            return
        item = replace(item, detail=f"unused since {timestamp(last)}")
        if not act:
            report.reaped.append(item)
            return
        try:
            for effect, controller, _ in idle:
                stop = getattr(controller, "stop", None)
                if not callable(stop):
                    raise RigError(f"provider {effect.provider_id} cannot stop a machine")
                await maybe_await(stop(as_entry(effect)))
        except Exception as exc:
            self._failed(record, item, error_message(exc), report)
            return
        self._reschedule(replace(record, updated_at=utc_now()), now + timedelta(seconds=record.idle_stop))
        report.reaped.append(item)
        self.project.emit(
            WorkspaceReaped(workflow=record.workflow, workspace=record.name, action="stopped", detail=item.detail)
        )

    async def _last_uses(
        self, session: ProviderSession, record: WorkspaceRecord
    ) -> list[tuple[EffectRecord, ProviderController, str | None]]:
        """Each machine of the workspace whose provider can say when it was last used, with that time."""
        found: list[tuple[EffectRecord, ProviderController, str | None]] = []
        owned = self.project.store.list_effects(
            owner_kind="workspace", owner_id=record.id, statuses=LIVE_EFFECT_STATUSES
        )
        for effect in owned:
            controller = await controller_of(session, effect.provider_id)
            # Only where the provider can both tell and stop (SupportsPower.stop): otherwise idle_stop
            # does not apply, and the workspace is left alone rather than marked.
            if isinstance(controller, SupportsLastUse) and callable(getattr(controller, "stop", None)):
                found.append((effect, controller, await maybe_await(controller.last_used(as_entry(effect)))))
        return found

    def _reschedule(self, record: WorkspaceRecord, idle_check: datetime | None) -> None:
        """Look again at the next idle check or at expiry, whichever comes first. Reached only for a
        workspace that is not expired, so a ``reap-failed`` mark (of a stop) is over."""
        moments = [moment for moment in (record.expires_at, idle_check and timestamp(idle_check)) if moment]
        status: WorkspaceStatus = "ready" if record.status == "reap-failed" else record.status
        error = None if record.status == "reap-failed" else record.error
        self.project.store.save_workspace(
            replace(record, status=status, error=error, reap_at=min(moments) if moments else None)
        )

    def _failed(self, record: WorkspaceRecord, item: ReapItem, error: str, report: ReapReport) -> None:
        """Mark it ``reap-failed`` (shown by ``rig ls``), to be tried again later, never dropped."""
        stored = self.project.store.get_workspace(record.name, record.workflow) or record
        retry = timestamp(utc_datetime() + timedelta(seconds=RETRY_SECONDS))
        self.project.store.save_workspace(
            replace(stored, status="reap-failed", error=error, reap_at=retry, updated_at=utc_now())
        )
        report.failed.append(replace(item, error=error))
        self.project.emit(
            WorkspaceReaped(workflow=record.workflow, workspace=record.name, action="failed", detail=error)
        )


__all__ = ["RETRY_SECONDS", "ReapItem", "ReapReport", "Reaper"]
