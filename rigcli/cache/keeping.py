"""Keeping answers: the project's memo written after a load, with what the config alone says.

What the config says of each workflow (its tasks, its own workspace operations, its provider
definitions as written) is kept by every load that computed an answer; a plan or listing answer
is kept with its gates (``planning.py``) beside it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rigcli._version import __version__
from rigcli.cache import memo
from rigcli.cache.configs import encoded_config
from rigcli.errors import RigError
from rigcli.state.paths import rig_home_path

TYPE_CHECKING = False  # not typing's (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.authoring.values import ProviderDefinition
    from rigcli.engine.project import Project
    from rigcli.graph import CompiledWorkflow


def definitions_of(workflow: CompiledWorkflow) -> list[ProviderDefinition]:
    """Each provider definition in the workflow's scopes, once, in scope order."""
    seen: dict[int, ProviderDefinition] = {}
    for scope in workflow.all_scopes():
        for definition in scope.values():
            seen.setdefault(id(definition), definition)
    return list(seen.values())


def config_answers(project: Project) -> dict[str, object]:
    """What the loaded config says that commands answer from without it: each workflow's tasks
    (``rig logs TASK``) and its own workspace operations and provider definitions (``rig shell``/``rig exec``)."""
    answers: dict[str, object] = {}
    for name, compiled in project.workflows.items():
        answers[name] = {
            "tasks": [[task.path, task.cache_path, task.name, task.store] for task in compiled.tasks],
            "operations": sorted(str(item) for item in compiled.workspace_operations),
            # A shell session runs the workflow's workspace(on_attach=...) first, through the engine.
            "attach_hook": [compiled.attach_hook is not None],  # a list: every entry's value is one
            "providers": [
                [definition.provider_id, encoded_config(definition)] for definition in definitions_of(compiled)
            ],
        }
    return {"config": answers}


def keep(project: Project, answers: Mapping[str, object]) -> None:
    """Write the project's memo: what the config says (always) and ``answers`` (None: drop that one),
    beside the answers already remembered while every file they were made from reads the same."""
    try:
        cache = os.path.join(rig_home_path(), "cache")
    except RigError:  # an unusable RIG_HOME: nothing is remembered, and every command loads the config
        return
    config_path = str(project.config_path)
    kept: dict[str, object] = dict(memo.recall(cache, version=__version__, config_path=config_path))
    kept.update(config_answers(project))
    for name, answer in answers.items():
        if answer is None:
            kept.pop(name, None)
        else:
            kept[name] = answer
    memo.keep(
        cache,
        version=__version__,
        project_dir=str(project.project_dir),
        config_path=config_path,
        answers=kept,
        read_since=project.loaded.config.read_since,
        inputs=project.loaded.config.inputs,
    )


__all__ = ["config_answers", "definitions_of", "keep"]
