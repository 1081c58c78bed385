"""``rig rm --forget``: remove a workspace's journaled machines and its record without its remove hook.

The remove hook is the config's, so this is what is left when rig_config.py does not import (or the
hook itself is what is broken). The machines are removed through their providers as the effects
journal recorded them; with a config that loads, its provider definitions are used, else bare ones.
"""

from __future__ import annotations

from dataclasses import replace

from rigcli.engine.project import Project
from rigcli.engine.reconcile import remove_workspace_effects
from rigcli.engine.session import ProviderSession
from rigcli.errors import ConfigError, TaskError
from rigcli.events import StateWarning, WorkspaceRemoveCompleted, WorkspaceRemoveStarted
from rigcli.records import WorkspaceRecord, utc_now


def hook_cannot_run(project: Project, name: str) -> ConfigError:
    """Plain rm with a config that does not import: the one line that says why and offers --forget."""
    return ConfigError(
        f"Workspace {name} was not removed: its remove hook cannot run, rig_config.py does not load "
        f"({project.config_error}). Fix it and run rig rm {name} again, or rig rm --forget {name} "
        "to remove its machines without the hook"
    )


async def _session(project: Project, workflow: str) -> ProviderSession:
    selected = project.workflows.get(workflow)
    return project.bare_session() if selected is None else await project.session(selected, "plan")


async def forget_workspace(project: Project, record: WorkspaceRecord, *, force: bool = False) -> WorkspaceRecord:
    """Under the rm lock the caller holds: every machine journaled for ``record`` removed, then the
    record dropped. A removal that cannot be confirmed keeps the record (``force``: dropped anyway,
    the leftovers staying journaled for ``rig gc``)."""
    store, name, workflow = project.store, record.name, record.workflow
    project.emit(WorkspaceRemoveStarted(workflow=workflow, workspace=name))
    outcome = await remove_workspace_effects(store, await _session(project, workflow), record)
    if outcome.failed and not force:
        message = outcome.summary()
        store.save_workspace(replace(record, error=message, updated_at=utc_now()))
        raise TaskError(
            f"Workspace {name} was not forgotten: {message}. Its record is kept: run rig rm --forget {name} "
            f"again once that is fixed, or rig rm --forget --force {name} to drop it anyway"
        )
    store.delete_workspace(name, workflow)
    if outcome.failed:
        project.emit(
            StateWarning(
                message=f"Workspace {name} forgotten with --force, but {outcome.summary()}; "
                "what could not be removed stays in the effects journal for rig gc"
            )
        )
    project.emit(WorkspaceRemoveCompleted(workflow=workflow, workspace=name))
    return record


__all__ = ["forget_workspace", "hook_cannot_run"]
