"""Walk a compiled workflow: judge each task's cache (plan) and run what is stale (apply).

One command plans and applies with the same ``RunIndex`` (one SELECT per store) and hands the
plan's verdicts to the apply pass: a verdict is reused when the task's upstream runs are the
ones it was judged against, so artifacts are validated once per command, not twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from rigcli.cachekeys import CACHED, judge_attempt, judge_run, name_the_change, reason
from rigcli.engine.invoke import Invalidate, Step, build_kwargs, call_handler, freeze, task_context, validate_output
from rigcli.engine.results import PlanNode
from rigcli.engine.runindex import RunIndex
from rigcli.engine.runlog import OutputRecorder
from rigcli.engine.session import ProviderSession
from rigcli.engine.stores import LOCAL, Stores
from rigcli.errors import InterruptedRunError, RigError, TaskError, describe_exception, where_in_project
from rigcli.events import ArtifactCreated, Event, NodeCached, NodeCompleted, NodeFailed, NodeStarted
from rigcli.fingerprint.parts import PartHashes
from rigcli.graph import CompiledWorkflow, StepSpec, TaskSpec
from rigcli.jsonutil import JsonValue, canonical_json
from rigcli.provider_api import find_artifacts
from rigcli.records import NodeRun, Reason, utc_datetime
from rigcli.speed.coroutines import need_event_loop
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import PlanStatus, RunStatus

if TYPE_CHECKING:
    from datetime import datetime

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")


@lazy_dataclass(frozen=True)
class Invalidation:
    """A task returned ``step.invalidate(target)``: the pass starts nothing new, and the caller
    invalidates ``target`` and evaluates again (see ``Planner.apply_held``)."""

    task: TaskSpec
    target: TaskSpec


class _Stopped(Exception):
    """A sibling branch failed; this branch starts nothing new."""


@lazy_dataclass(frozen=True)
class Verdict:
    """Whether one task's cached run is reused, and the first reason when it is not."""

    status: PlanStatus
    reason: Reason
    run: NodeRun | None
    upstream: tuple[str, ...] = ()  # the upstream run ids it was judged against


class Evaluation:
    """One pass over the workflow. ``apply=False`` never runs handlers."""

    def __init__(
        self,
        *,
        workflow: CompiledWorkflow,
        keys: dict[int, str],
        parts: Callable[[TaskSpec], PartHashes],
        stores: Stores,
        runs: RunIndex,
        session: ProviderSession,
        emit: Callable[[Event], None],
        apply: bool,
        prior: dict[int, Verdict] | None = None,
        recorder: OutputRecorder | None = None,
        apply_id: str | None = None,
        only: frozenset[int] | None = None,
        project_dir: str = "",
    ) -> None:
        self.workflow = workflow
        self.keys = keys
        self.parts = parts  # the named parts of a task's cache key (Project.task_parts)
        self.stores = stores
        self.runs = runs
        self.session = session
        self.emit = emit
        self.apply = apply
        self.prior = prior or {}
        self.recorder = recorder  # keeps each run's output in the state (engine/runlog.py)
        self.apply_id = apply_id  # the apply its runs belong to (``rig runs``)
        self.only = only  # ``apply --only``: the task indexes that may run (None: every one)
        self.project_dir = project_dir  # to place a handler's failure in the project's files
        self._now: datetime | None = None  # read when a task with a cache TTL is judged (see now)
        self.nodes: dict[int, PlanNode] = {}
        self.verdicts: dict[int, Verdict] = {}
        self.used_runs: dict[int, str] = {}
        self.started: dict[int, str] = {}  # the runs this pass started, by task index (failed ones too)
        self.ran = 0
        self.invalidation: Invalidation | None = None  # the first step.invalidate of this pass
        self._stopping = False

    def now(self) -> datetime:
        """The clock this pass judges cache TTLs by: read once, at the first task that has one."""
        if self._now is None:
            self._now = utc_datetime()
        return self._now

    def plan_nodes(self) -> list[PlanNode]:
        return [self.nodes[index] for index in sorted(self.nodes)]

    async def run(self) -> JsonValue | None:
        """The final context, or None when a task is pending (plan) or invalidated another (apply)."""
        ctx, _, blocked = await self.walk(self.workflow.steps, {}, [], False)
        return None if blocked else ctx

    async def walk(
        self, steps: tuple[StepSpec, ...], ctx: JsonValue, upstream: list[str], blocked: bool
    ) -> tuple[JsonValue, list[str], bool]:
        for step in steps:
            if isinstance(step, TaskSpec):
                ctx, upstream, blocked = await self.task(step, ctx, upstream, blocked)
            else:
                ctx, upstream, blocked = await self.parallel(step.branches, ctx, upstream, blocked)
        return ctx, upstream, blocked

    async def parallel(
        self,
        branches: tuple[tuple[str, tuple[StepSpec, ...]], ...],
        ctx: JsonValue,
        upstream: list[str],
        blocked: bool,
    ) -> tuple[JsonValue, list[str], bool]:
        if self.apply and self._may_run(branches):
            await need_event_loop()
            outcomes = await asyncio.gather(
                *(self._branch(steps, ctx, upstream, blocked) for _, steps in branches), return_exceptions=True
            )
            errors = [item for item in outcomes if isinstance(item, BaseException)]
            if errors:  # the failure itself, not a sibling's "stopped because of it"
                raise next((item for item in errors if not isinstance(item, _Stopped)), errors[0])
            results = [item for item in outcomes if not isinstance(item, BaseException)]
        else:
            results = [await self.walk(steps, ctx, upstream, blocked) for _, steps in branches]
        if any(branch_blocked for _, _, branch_blocked in results):
            return None, [], True
        merged: dict[str, JsonValue] = dict(ctx) if isinstance(ctx, dict) else {}
        for (key, _), (branch_ctx, _, _) in zip(branches, results, strict=False):
            if key in merged:
                raise TaskError(f"Parallel branch {key} conflicts with an existing context key")
            merged[key] = branch_ctx
        joined = sorted(run_id for _, branch_upstream, _ in results for run_id in branch_upstream)
        return merged, joined, False

    def _may_run(self, branches: tuple[tuple[str, tuple[StepSpec, ...]], ...]) -> bool:
        """Whether any task under these branches might run: something ran already (so upstream
        runs changed), or the plan did not find one of them cached."""
        if self.ran:
            return True

        def tasks(steps: tuple[StepSpec, ...]) -> list[TaskSpec]:
            found: list[TaskSpec] = []
            for step in steps:
                if isinstance(step, TaskSpec):
                    found.append(step)
                else:
                    for _, inner in step.branches:
                        found.extend(tasks(inner))
            return found

        for _, steps in branches:
            for task in tasks(steps):
                verdict = self.prior.get(task.index)
                if verdict is None or verdict.run is None:
                    return True
        return False

    async def _branch(
        self, steps: tuple[StepSpec, ...], ctx: JsonValue, upstream: list[str], blocked: bool
    ) -> tuple[JsonValue, list[str], bool]:
        try:
            return await self.walk(steps, ctx, upstream, blocked)
        except BaseException:
            self._stopping = True  # siblings finish what they started but begin nothing new
            raise

    async def task(
        self, task: TaskSpec, ctx: JsonValue, upstream: list[str], blocked: bool
    ) -> tuple[JsonValue, list[str], bool]:
        if blocked or self.invalidation is not None:  # after an invalidation, nothing new starts
            self._record(task, "pending", reason("upstream-pending"), None, upstream)
            return None, [], True
        verdict = await self.judge(task, upstream)
        if verdict.run is not None:
            self._record(task, "cached", CACHED, verdict.run.id, upstream)
            self.used_runs[task.index] = verdict.run.id
            if self.apply:
                self.emit(NodeCached(node_path=task.path, run_id=verdict.run.id))
            return verdict.run.output, [verdict.run.id], False
        self._record(task, "pending", verdict.reason, None, upstream)
        if not self.apply:
            return None, [], True
        if self.only is not None and task.index not in self.only:  # left pending: what follows waits
            return None, [], True
        if self._stopping:
            raise _Stopped()
        if self.session.hub.cancellation.is_set():
            raise InterruptedRunError("Interrupted; no new tasks were started")
        executed = await self.execute(task, ctx, upstream)
        if executed is None:  # it invalidated an earlier task: this pass ends here
            return None, [], True
        new_ctx, run_id = executed
        self.used_runs[task.index] = run_id
        return new_ctx, [run_id], False

    def _record(self, task: TaskSpec, status: PlanStatus, why: Reason, run_id: str | None, upstream: list[str]) -> None:
        self.nodes[task.index] = PlanNode(
            index=task.index + 1,
            path=task.path,
            name=task.name,
            status=status,
            reason=why,
            run_id=run_id,
            upstream_run_ids=list(upstream),
            scope="local" if task.store == LOCAL else "global",
        )

    async def judge(self, task: TaskSpec, upstream: list[str]) -> Verdict:
        earlier = self.prior.get(task.index)
        if earlier is not None and earlier.upstream == tuple(upstream):
            # Judged by this command's plan under the same lock and against the same upstream
            # runs: nothing it looked at can have changed since.
            verdict = earlier
        else:
            verdict = await self._judge(task, upstream)
        self.verdicts[task.index] = verdict
        return verdict

    async def _judge(self, task: TaskSpec, upstream: list[str]) -> Verdict:
        judged_against = tuple(upstream)
        candidates = self.runs.candidates(task)
        key, provider_fp = self.keys[task.index], self.session.fingerprint(task.providers)
        first: tuple[Reason, NodeRun] | None = None
        for run in candidates:
            why = judge_run(
                run,
                key=key,
                provider_fp=provider_fp,
                upstream=upstream,
                ttl=task.node.cache_ttl,
                now=self.now() if task.node.cache_ttl is not None else None,
            )
            if why is None:
                why = await self._effectful_checks(task, run)
            if why is None:
                return Verdict("cached", CACHED, run, judged_against)
            first = first or (why, run)
        attempt = judge_attempt(
            self.runs.attempts(task), candidates, liveness=lambda run: self.runs.liveness(task.store, run)
        )
        if attempt is not None:
            return Verdict("pending", attempt, None, judged_against)
        if first is None:
            return Verdict("pending", reason("no-previous-run"), None, judged_against)
        return Verdict("pending", self.named(task, *first), None, judged_against)

    def named(self, task: TaskSpec, why: Reason, run: NodeRun) -> Reason:
        """``task-changed``/``provider-changed`` naming the part that changed (from the parts ``run`` stored)."""
        if why.code == "task-changed":
            return name_the_change(why, self.runs.parts(task.store, run.node_key), self.parts(task))
        if why.code == "provider-changed":
            old = self.runs.parts(task.store, run.provider_fingerprint)
            return name_the_change(why, old, self.session.fingerprint_parts(task.providers))
        return why

    def _abandoned_by(self, task: TaskSpec) -> dict[str, str]:
        """The task's runs left ``running`` by a rig that is gone (run id -> the evidence): closed
        ``abandoned`` in the transaction that starts its new run. Under the writer lock, a run of
        another process is running nowhere (see judge_liveness)."""
        found: dict[str, str] = {}
        for run in self.runs.running(task):
            state = self.runs.liveness(task.store, run)
            if not state.alive:
                found[run.id] = state.evidence
        return found

    async def _effectful_checks(self, task: TaskSpec, run: NodeRun) -> Reason | None:
        if task.node.output is not None:
            try:
                validate_output(task.node.output, run.output)
            except Exception:
                return reason("output-schema-invalid")
        problem = await self.session.artifact_problem(list(run.artifacts), task.providers)
        return None if problem is None else reason("artifact-invalid", problem)

    async def execute(self, task: TaskSpec, ctx: JsonValue, upstream: list[str]) -> tuple[JsonValue, str] | None:
        """Run the task and record its run: (its context, the run id), or None when it invalidated
        an earlier task (its run is recorded and at once invalidated, so it is never reused)."""
        await need_event_loop()  # the handler runs in a worker thread that reports back to the loop

        store = self.stores.for_write(task.store)
        run_id: str = store.start_run(
            workflow=self.stores.workflow_column(task.store, self.workflow.name),
            node_path=task.cache_path,
            node_name=task.name,
            node_kind="task",
            node_key=self.keys[task.index],
            provider_fingerprint=self.session.fingerprint(task.providers),
            upstream_run_ids=upstream,
            apply_id=self.apply_id,
            parts={
                self.keys[task.index]: self.parts(task),
                self.session.fingerprint(task.providers): self.session.fingerprint_parts(task.providers),
            },
            abandon=self._abandoned_by(task),
        )
        self.started[task.index] = run_id
        step = Step(ctx=ctx, path=task.path, workflow=self.workflow.name)
        recorder = self.recorder
        if recorder is not None:
            recorder.attach(task.path, run_id, store)

        def finish(status: RunStatus, **fields: Any) -> None:
            # The run's last output and its metadata are written in its finishing transaction.
            log = recorder.take(task.path, run_id) if recorder is not None else None
            store.finish_run(run_id, status=status, metadata=step.recorded, log=log, **fields)

        # From here on every way out finishes the run, whatever raises (a listener too): a run
        # is left ``running`` only by a process that died, never by one that is still here.
        # Once the user stopped the command, the run is ``interrupted`` however the handler ended:
        # a terminal's Ctrl-C also kills the handler's child, which the handler may take for its
        # own failure (CalledProcessError) or success (a wait() that returned).
        stopped = self.session.hub.cancellation
        try:
            self.emit(
                NodeStarted(node_path=task.path, index=task.index + 1, total=len(self.workflow.tasks), run_id=run_id)
            )
            output = await self._call(task, step, ctx, run_id)
            if stopped.is_set():
                raise InterruptedRunError("interrupted")
        except (asyncio.CancelledError, KeyboardInterrupt, InterruptedRunError):
            finish("interrupted", error="interrupted")
            self.emit(NodeFailed(node_path=task.path, error="interrupted", run_id=run_id))
            raise
        except BaseException as exc:
            if not stopped.is_set():
                self._failed(task, run_id, exc, finish)
            finish("interrupted", error="interrupted")
            self.emit(NodeFailed(node_path=task.path, error="interrupted", run_id=run_id))
            raise InterruptedRunError("interrupted") from exc
        if isinstance(output, Invalidation):
            finish("succeeded", output=None)
            store.invalidate_runs([run_id], cascade=False)
            self.invalidation = self.invalidation or output
            return None
        artifacts: list[JsonValue] = [dict(ref) for ref in find_artifacts(output)]
        try:
            finish("succeeded", output=output, artifacts=artifacts)
        except BaseException as exc:  # e.g. a full disk: the smaller record of a failure may still fit
            message = f"Task {task.path}: its result could not be recorded: {describe_exception(exc)}"
            store.finish_run(run_id, status="failed", error=message, metadata=step.recorded)
            raise
        self.ran += 1
        incoming = {canonical_json(dict(ref)) for ref in find_artifacts(ctx)}
        for artifact in artifacts:
            if canonical_json(artifact) not in incoming:
                self.emit(ArtifactCreated(node_path=task.path, artifact=artifact))
        self.emit(NodeCompleted(node_path=task.path, run_id=run_id))
        return output, run_id

    def _failed(self, task: TaskSpec, run_id: str, exc: BaseException, finish: Callable[..., None]) -> NoReturn:
        """Record the run ``failed`` (through ``finish``, which keeps its output); raise what the command ends with."""
        if isinstance(exc, SystemExit):  # the handler's thread hands it over like any other exception
            message = f"Task {task.path} called sys.exit({exc.code!r})"
            finish("failed", error=message)
            self.emit(NodeFailed(node_path=task.path, error=message, run_id=run_id))
            raise TaskError(message) from None
        message = str(exc) if isinstance(exc, RigError) else f"Task {task.path} failed: {describe_exception(exc)}"
        where = where_in_project(exc, self.project_dir)
        if where is not None:  # the line of the project's code it came from; the output is kept
            message = f"{message} at {where} (the rest: rig logs {task.path})"
        finish("failed", error=message)
        self.emit(NodeFailed(node_path=task.path, error=message, run_id=run_id))
        if not isinstance(exc, Exception):
            raise exc
        if isinstance(exc, RigError) and (where is None or exc.exit_code != 1):
            raise exc
        raise TaskError(message, project_dir=self.project_dir) from exc

    async def _call(self, task: TaskSpec, step: Step, ctx: JsonValue, run_id: str) -> JsonValue | Invalidation:
        from rigcli.engine import capture  # with logging, only when a handler really runs

        fixed: dict[str, object] = {
            "step": step,
            "config": freeze(task.config),
            "local": self.session.local,
            "log": capture.handler_logger(task.path),
        }
        # What providers make here belongs to this run: gc keeps it while a live cache entry refers to it.
        factories = self.session.runtime_factories(
            task.providers, node_path=task.path, owner=("run", run_id), cache_key=self.keys[task.index]
        )
        console = capture.NodeConsole(task.path, self.emit)
        kwargs = await build_kwargs(task.node.handler, fixed, factories)
        result = await call_handler(task.node.handler, kwargs, console)
        output = task_context(task.path, result, ctx)
        if isinstance(output, Invalidate):
            return Invalidation(task, self.invalidate_target(task, output.target))
        if task.node.output is not None:
            try:
                output = validate_output(task.node.output, output)
            except Exception as exc:
                raise TaskError(f"Task {task.path} output failed schema validation: {exc}") from exc
        return output

    def invalidate_target(self, task: TaskSpec, target: str) -> TaskSpec:
        earlier = [t for t in self.workflow.tasks if t.index < task.index and t.index in self.used_runs]
        matches = [t for t in earlier if t.path == target or t.cache_path == target] or [
            t for t in earlier if t.name == target
        ]
        if not matches:
            raise TaskError(
                f"Task {task.path} cannot invalidate {target} because it has not run earlier in this workflow"
            )
        if len(matches) > 1:
            paths = ", ".join(t.path for t in matches)
            raise TaskError(
                f"Task {task.path} cannot invalidate {target} because it matches multiple earlier tasks: {paths}"
            )
        return matches[0]


__all__ = ["Evaluation", "Invalidation", "RunIndex", "Verdict"]
