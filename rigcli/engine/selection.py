"""Which tasks a command line names: a task by path or name, and ``--only``'s tasks with what they need."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rigcli.errors import NotFoundError
from rigcli.graph import CompiledWorkflow, StepSpec, TaskSpec
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import difflib
else:
    difflib = lazy_module("difflib")


def match_tasks(workflow: CompiledWorkflow, target: str) -> list[TaskSpec]:
    """The tasks ``target`` names: by path (display or cache), else every task of that name."""
    exact = [task for task in workflow.tasks if target in (task.path, task.cache_path)]
    return exact or [task for task in workflow.tasks if task.name == target]


def require_tasks(workflow: CompiledWorkflow, target: str) -> list[TaskSpec]:
    """``match_tasks``, or a NotFoundError that names the closest task paths."""
    matches = match_tasks(workflow, target)
    if matches:
        return matches

    paths = [task.path for task in workflow.tasks]
    names = {task.name: task.path for task in workflow.tasks}
    close = difflib.get_close_matches(target, paths, n=3, cutoff=0.6)
    close += [names[name] for name in difflib.get_close_matches(target, list(names), n=3, cutoff=0.6)]
    close = list(dict.fromkeys(close))[:3]
    hint = f"; did you mean {' or '.join(close)}?" if close else f" (tasks: {', '.join(paths[:10]) or 'none'})"
    raise NotFoundError(f"Workflow {workflow.name} has no task {target}{hint}")


def upstream_of(workflow: CompiledWorkflow) -> dict[int, frozenset[int]]:
    """Each task's upstream (task index -> the indexes whose output reaches it): everything before
    it in its sequence, and before a parallel block everything before the block; never a sibling
    branch."""
    found: dict[int, frozenset[int]] = {}

    def walk(steps: tuple[StepSpec, ...], before: frozenset[int]) -> frozenset[int]:
        for step in steps:
            if isinstance(step, TaskSpec):
                found[step.index] = before
                before = before | {step.index}
            else:
                after = before
                for _, branch in step.branches:
                    after = after | walk(branch, before)
                before = after
        return before

    walk(workflow.steps, frozenset())
    return found


def only_closure(workflow: CompiledWorkflow, targets: Iterable[str]) -> tuple[list[TaskSpec], frozenset[int]]:
    """``--only``: the tasks named and the indexes that may run (those tasks and their upstream)."""
    named = {task.index: task for target in targets for task in require_tasks(workflow, target)}
    upstream = upstream_of(workflow)
    allowed = frozenset(index for task in named.values() for index in (task.index, *upstream[task.index]))
    return [named[index] for index in sorted(named)], allowed


__all__ = ["match_tasks", "only_closure", "require_tasks", "upstream_of"]
