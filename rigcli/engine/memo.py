"""The project's memo, written after a full load: what lean paths may know without loading the config.

One writer for every section, so that no command's full load drops what another lean path
needs: the tasks (``rig logs TASK``, ``speed/task_names.py``) and, under ``attach``, each
workflow's own workspace operations and provider definitions as written (``rig shell``/``rig
exec``, ``speed/attach_memo.py``); under ``ls`` what a full ``rig ls`` planned and under
``plan`` what a full ``rig plan`` printed (``engine/listing_memo.py``), each kept by other full
loads while the files it was planned from read the same. A section for another lean path is one
more entry here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rigcli.authoring.values import EnvRef, ProviderDefinition
from rigcli.engine.project import Project
from rigcli.errors import RigError
from rigcli.graph import CompiledWorkflow
from rigcli.jsonutil import JsonValue
from rigcli.speed.attach_memo import ATTACH_SECTION
from rigcli.speed.listing_memo import LISTING_SECTION, PLAN_SECTION


class _NotPlain(Exception):
    """A config value only a load can resolve (a resolver function, an object)."""


class _Kept:
    """A planned section this load did not plan (rather than planned and could not keep: None)."""


KEPT = _Kept()


def remember_project(project: Project, *, listing: JsonValue | _Kept = KEPT, plan: JsonValue | _Kept = KEPT) -> None:
    """Write the memo of ``project``'s loaded config (with ``listing``, what ``rig ls`` planned, and
    ``plan``, what ``rig plan`` printed; None: nothing); a home that cannot be written to keeps nothing.

    A planned section not given is kept from the memo being replaced while that memo is still
    current (every file it stamped reads the same): what it was planned from is then what this load
    read, and the rest of what it depends on its reader checks again.
    """
    from rigcli._version import __version__
    from rigcli.speed.task_names import recall_sections, remember
    from rigcli.state.paths import rig_home_path

    try:
        cache = os.path.join(rig_home_path(), "cache")  # not rig_home(): pathlib is not imported for it
    except RigError:  # an unusable RIG_HOME: nothing is remembered, and the lean paths load the config
        return
    if isinstance(listing, _Kept) or isinstance(plan, _Kept):
        kept = recall_sections(cache, version=__version__, config_path=str(project.config_path))
        # JSON: the sections a full load wrote, read back as they were written
        listing = kept.get(LISTING_SECTION) if isinstance(listing, _Kept) else listing  # type: ignore[assignment]
        plan = kept.get(PLAN_SECTION) if isinstance(plan, _Kept) else plan  # type: ignore[assignment]
    workflows = project.workflows
    remember(
        cache,
        version=__version__,
        project_dir=str(project.project_dir),
        config_path=str(project.config_path),
        workflows={
            name: [(task.path, task.cache_path, task.name, task.store) for task in compiled.tasks]
            for name, compiled in workflows.items()
        },
        read_since=project.loaded.config.read_since,
        inputs=project.loaded.config.inputs,
        sections={
            ATTACH_SECTION: {name: _attach_entry(compiled) for name, compiled in workflows.items()},
            LISTING_SECTION: listing,
            PLAN_SECTION: plan,
        },
    )


def _attach_entry(workflow: CompiledWorkflow) -> JsonValue:
    seen: set[int] = set()
    providers: list[JsonValue] = []
    for scope in workflow.all_scopes():
        for definition in scope.values():
            if id(definition) not in seen:
                seen.add(id(definition))
                providers.append([definition.provider_id, encoded_config(definition)])
    operations: list[JsonValue] = [str(name) for name in sorted(workflow.workspace_operations)]
    if workflow.attach_hook is not None and "shell" not in operations:  # its hook runs the full way
        operations.append("shell")
    return {"operations": operations, "providers": providers}


def encoded_config(definition: ProviderDefinition) -> JsonValue:
    """The definition's config as written (``speed/attach_memo.py``), or None when only a load can use it."""
    if definition.plugin is not None:
        return None
    try:
        return _encode(definition.config)
    except _NotPlain:
        return None


def _encode(value: object) -> JsonValue:
    if isinstance(value, EnvRef):
        return ["env", value.name, value.default, bool(value.secret)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return ["v", str(value) if isinstance(value, str) else value]
    if isinstance(value, Mapping):
        return ["map", [[str(key), _encode(item)] for key, item in value.items()]]
    if isinstance(value, (list, tuple)):
        return ["list", [_encode(item) for item in value]]
    raise _NotPlain(type(value).__name__)


__all__ = ["encoded_config", "remember_project"]
