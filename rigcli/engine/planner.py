"""Plan a workflow and apply it: plan once under the lock, then run what the plan found pending.

``step.invalidate(target)`` (DESIGN §3) ends a pass early: ``target`` is invalidated (with what
was built on it) and the workflow is evaluated again, at most ``MAX_EVALUATIONS`` times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rigcli.engine.applies import ApplyJournal
from rigcli.engine.evaluate import Evaluation
from rigcli.engine.project import Project
from rigcli.engine.results import ApplyResult, WorkflowPlan
from rigcli.engine.runindex import RunIndex
from rigcli.engine.selection import only_closure
from rigcli.engine.session import ProviderSession
from rigcli.errors import PendingWorkError, TaskError
from rigcli.events import PlanCreated, WorkflowApplyCompleted, WorkflowApplyStarted
from rigcli.graph import CompiledWorkflow, TaskSpec
from rigcli.jsonutil import JsonValue
from rigcli.speed.coroutines import is_cancellation

MAX_EVALUATIONS = 9  # passes of one apply; a task that invalidates on every pass stops it with an error


class Planner:
    """Plans and applies the project's workflows."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def evaluation(
        self,
        workflow: CompiledWorkflow,
        session: ProviderSession,
        runs: RunIndex,
        *,
        apply: bool,
        prior: Evaluation | None = None,
        apply_id: str | None = None,
        only: frozenset[int] | None = None,
    ) -> Evaluation:
        project = self.project
        return Evaluation(
            workflow=workflow,
            keys=project.keys_for(workflow),
            parts=project.task_parts,
            stores=project.stores,
            runs=runs,
            session=session,
            emit=project.emit,
            apply=apply,
            prior=prior.verdicts if prior is not None else None,
            recorder=project.recorder if apply else None,
            apply_id=apply_id,
            only=only,
            project_dir=str(project.project_dir),
        )

    async def plan(self, workflow: str | None = None) -> WorkflowPlan:
        selected = self.project.select(workflow)
        return await self.plan_with(selected, await self.project.session(selected, "plan"))

    async def plan_with(self, selected: CompiledWorkflow, session: ProviderSession) -> WorkflowPlan:
        """The plan of ``selected`` as this command's providers see it."""
        plan, _ = await self._plan(selected, session, RunIndex(self.project.stores, selected.name))
        return plan

    async def plan_judged(
        self, selected: CompiledWorkflow, session: ProviderSession
    ) -> tuple[WorkflowPlan, Evaluation]:
        """The plan of ``selected`` and the evaluation that judged it (its verdicts' runs)."""
        return await self._plan(selected, session, RunIndex(self.project.stores, selected.name))

    async def _plan(
        self, selected: CompiledWorkflow, session: ProviderSession, runs: RunIndex
    ) -> tuple[WorkflowPlan, Evaluation]:
        evaluation = self.evaluation(selected, session, runs, apply=False)
        final = await evaluation.run()
        plan = WorkflowPlan(selected.name, evaluation.plan_nodes(), final, session.all_checks())
        self.project.emit(
            PlanCreated(workflow=selected.name, cached_node_count=plan.cached_node_count, node_count=plan.node_count)
        )
        return plan, evaluation

    async def apply(
        self,
        workflow: str | None = None,
        dry_run: bool = False,
        *,
        expect_cached: bool = False,
        only: Sequence[str] = (),
    ) -> ApplyResult:
        selected = self.project.select(workflow)
        selection = only_closure(selected, only) if only else None  # unknown names fail before the lock
        if dry_run:
            plan = await self.plan_with(selected, await self.project.session(selected, "plan"))
            return ApplyResult(plan.workflow, plan.final_context, plan, dry_run=True)
        with self.project.stores.writing("apply"):
            session = await self.project.session(selected, "require")
            return await self.apply_held(selected, session, expect_cached=expect_cached, only=selection)

    async def apply_held(
        self,
        selected: CompiledWorkflow,
        session: ProviderSession,
        *,
        command: str = "apply",
        workspace: str | None = None,
        expect_cached: bool = False,
        only: tuple[list[TaskSpec], frozenset[int]] | None = None,
    ) -> ApplyResult:
        """Apply under the lock the caller holds, with the caller's providers (``apply`` and ``fork``).

        The apply is recorded in the history (``rig runs``) before anything runs, and finished with
        what each task did, however it ends. ``expect_cached``: raise PendingWorkError, before
        anything runs (or is recorded), when a task is pending. ``only``: the tasks ``--only``
        named and the indexes that may run (only_closure). ``workspace``: the one a fork makes, for
        its row in the history.
        """
        runs = RunIndex(self.project.stores, selected.name)
        plan, planned = await self._plan(selected, session, runs)
        if expect_cached and plan.cached_node_count < plan.node_count:
            raise pending_work(plan)
        allowed = only[1] if only is not None else None
        journal = ApplyJournal.start(self.project.stores.local, selected, command, workspace)
        self.project.emit(
            WorkflowApplyStarted(workflow=selected.name, node_count=len(selected.tasks), apply_id=journal.id)
        )
        passes: list[Evaluation] = []
        try:
            context = await self._run_pending(selected, session, runs, planned, passes, journal.id, allowed)
        except BaseException as exc:
            if is_cancellation(exc):
                self.project.cancellation.cancel()  # commands still running in worker threads stop too
            journal.failed(passes, exc)
            raise
        self.close_abandoned(runs)
        evaluation = passes[-1]
        cached = sum(1 for node in evaluation.plan_nodes() if node.status == "cached")
        # What --only kept from running: every task still pending once the named ones are done.
        left = [task for task in selected.tasks if task.index not in evaluation.used_runs] if only else []
        skipped = tuple(task.path for task in left)
        self.project.stores.local.record_apply(
            selected.name,
            provider_fingerprint=session.fingerprint(selected.root_providers),
            cached_node_count=cached,
            node_count=len(selected.tasks),
        )
        journal.succeeded(passes)
        self.project.emit(
            WorkflowApplyCompleted(
                workflow=selected.name,
                ran=evaluation.ran,
                cached_node_count=cached,
                node_count=len(selected.tasks),
                apply_id=journal.id,
                skipped=skipped,
            )
        )
        named = tuple(task.path for task in only[0]) if only is not None else ()
        return ApplyResult(selected.name, context, plan, runs=dict(evaluation.used_runs), only=named, skipped=skipped)

    async def _run_pending(
        self,
        selected: CompiledWorkflow,
        session: ProviderSession,
        runs: RunIndex,
        planned: Evaluation,
        passes: list[Evaluation],
        apply_id: str,
        only: frozenset[int] | None,
    ) -> JsonValue:
        """Evaluation passes (each appended to ``passes``) until one completes; each pass that ends in
        ``step.invalidate`` invalidates its target and starts over, and the ``MAX_EVALUATIONS``-th
        such pass is an error."""
        prior: Evaluation | None = planned  # the plan's verdicts hold until something is invalidated
        while True:
            evaluation = self.evaluation(selected, session, runs, apply=True, prior=prior, apply_id=apply_id, only=only)
            passes.append(evaluation)
            context = await evaluation.run()
            invalidation = evaluation.invalidation
            if invalidation is None:
                return context
            self.invalidate_tasks(selected, [invalidation.target.index])
            if len(passes) == MAX_EVALUATIONS:
                raise TaskError(
                    f"Task {invalidation.task.path} repeatedly invalidated {invalidation.target.path}; "
                    f"stopping after {MAX_EVALUATIONS} attempts"
                )
            runs.forget()
            prior = None

    def close_abandoned(self, runs: RunIndex) -> int:
        """Close ``abandoned`` the runs other rigs left ``running`` in the stores this command holds
        locked: under the lock, their rig is proven gone (state/process.py:judge_liveness). Runs
        of a task this apply ran again were closed with its new run already."""
        closed = 0
        for key in self.project.stores.held():
            evidence = {}
            for run in runs.all_running(key):
                state = runs.liveness(key, run)
                if not state.alive:
                    evidence[run.id] = state.evidence
            if evidence:
                closed += self.project.stores.get(key).abandon_runs(evidence)
        return closed

    def invalidate_tasks(self, workflow: CompiledWorkflow, indexes: Iterable[int]) -> int:
        """Invalidate every valid run of these tasks (older ones too) and, by cascade, what was built on them."""
        stores = self.project.stores
        by_store: dict[str, list[str]] = {}
        for index in indexes:
            task = workflow.tasks[index]
            by_store.setdefault(task.store, []).append(task.cache_path)
        return sum(
            stores.for_write(key).invalidate_paths(stores.workflow_column(key, workflow.name), paths)
            for key, paths in by_store.items()
        )


def pending_work(plan: WorkflowPlan) -> PendingWorkError:
    """``--expect-cached``'s one error line: every pending task and why, nothing ran."""
    pending = [node for node in plan.nodes if node.status == "pending"]
    named = ", ".join(f"{node.path} ({node.reason.code}: {node.reason.message})" for node in pending)
    noun = "task is" if len(pending) == 1 else "tasks are"
    document: dict[str, object] = {
        "workflow": plan.workflow,
        "pending": [{"path": node.path, "reason": node.reason.to_json()} for node in pending],
        "plan": plan.to_json(),
    }
    return PendingWorkError(f"--expect-cached: {len(pending)} {noun} pending, nothing ran: {named}", document)


__all__ = ["MAX_EVALUATIONS", "Planner", "pending_work"]
