"""The Engine protocol: everything the CLI (or an embedding host) may ask of a loaded project.

Create one with ``rigcli.engine.create_engine(...)`` and ``await engine.load()``. Every method
raises ``rigcli.errors.RigError`` subclasses, each carrying its exit code. Writers (apply, fork,
remove, operations, invalidate, clear) hold the state lock for their whole run; reads never wait.

``workflow`` arguments say which workflow a call is about, as the user said it: a name, or None.
The engine selects (the named one, else the only one); with several defined and none named it
raises ``AmbiguousWorkflowError`` (exit 2, carrying the names) before it reads or writes
anything, so a caller with a user at hand may ask and call again with the answer.

An async host awaits the coroutines on its own loop. A synchronous caller (the CLI) hands them to
``run``: the engine owns the event loop they need, and the caller only hears of it through
``on_loop``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from rigcli.engine.connect_target import ConnectTarget
from rigcli.engine.history_views import AppliedRun, LogSelection, LogUpdate
from rigcli.engine.provenance import WorkspaceDiff
from rigcli.engine.reap_report import ReapReport
from rigcli.engine.results import (
    ApplyResult,
    CacheEntry,
    GcReport,
    JsonObject,
    NodeExplanation,
    OperationInfo,
    ProjectDiagnosis,
    ProjectInfo,
    WorkflowPlan,
    WorkflowSummary,
)
from rigcli.engine.shape import WorkflowGraph
from rigcli.engine.timing import RunStats, Timeline
from rigcli.event_bus import EventListener
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import Cancellation, LiveStatus
from rigcli.records import NodeRun, WorkspaceRecord
from rigcli.state.api import StateStatus

T = TypeVar("T")


class Engine(Protocol):
    project_dir: Path
    config_path: Path
    cancellation: Cancellation  # cancel() stops running commands; the run then ends "interrupted"

    async def load(self) -> None:
        """Import rig_config.py, compile its workflows, open the state (once)."""
        ...

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every event, in emission order; returns an unsubscriber."""
        ...

    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        """Run one of this engine's coroutines from synchronous code, to its result.

        It is driven without an event loop until it needs one (a cached plan, a fork's sync create
        hook never does), then on the engine's own loop, kept until ``close()``. ``on_loop(True)``
        comes right before project code may run (on the loop, or on a hook's thread while driven
        by hand), ``on_loop(False)`` once it no longer can.
        """
        ...

    def interrupt(self) -> None:
        """The graceful stop (any thread): ``cancellation`` is set, so running commands are killed and
        lock waits end, and the coroutine ``run`` is running is cancelled; its node ends ``interrupted``."""
        ...

    def close(self) -> None: ...

    # -- the project ----------------------------------------------------------------------------
    def workflow_names(self) -> list[str]: ...

    def select_workflow(self, workflow: str | None = None) -> str:
        """The workflow meant: ``workflow`` if defined (else NotFoundError), or the only one
        (else AmbiguousWorkflowError); for callers that must name it before acting."""
        ...

    def list_workflow_summaries(self) -> list[WorkflowSummary]: ...

    def state_status(self) -> StateStatus:
        """The project state: backend, location (password masked), versions, lock holder; never waits."""
        ...

    def get_project_info(self) -> ProjectInfo: ...

    def diagnose(self) -> ProjectDiagnosis:
        """``rig doctor``'s view: state status and each configured provider's own diagnosis.
        Needs no ``load()``; creates, migrates and locks nothing; a broken config is reported."""
        ...

    # -- plan and apply ----------------------------------------------------------------------------
    async def plan(self, workflow: str | None = None) -> WorkflowPlan: ...

    async def plan_listed(self, workflow: str | None) -> WorkflowPlan:
        """``plan(workflow)`` for ``rig ls`` and ``rig plan``, keeping what ``remember_listed`` and
        ``remember_plan`` need."""
        ...

    def remember_listed(self, workflows: Sequence[str]) -> None:
        """After ``plan_listed`` of every workflow: keep what lets the next ``rig ls`` answer without
        the config while nothing those plans read has changed (engine/listing_memo.py)."""
        ...

    def remember_plan(self, workflow: str, hint: str | None) -> None:
        """After ``plan_listed(workflow)``: keep the plan as ``rig plan`` prints it (``hint``: the line
        under a pending one) while nothing it read has changed (engine/listing_memo.py)."""
        ...

    async def apply(
        self,
        workflow: str | None = None,
        dry_run: bool = False,
        *,
        expect_cached: bool = False,
        only: Sequence[str] = (),
    ) -> ApplyResult:
        """Run the pending tasks. ``expect_cached``: run nothing and raise PendingWorkError (exit 5)
        when a task is pending. ``only``: run those tasks (names or paths) and the pending upstream
        they need, nothing downstream; ``ApplyResult.skipped`` says what stayed pending."""
        ...

    def list_node_runs(self, workflow: str | None = None) -> list[NodeRun]: ...

    # -- pictures: rig graph, rig runs --timeline / --stats ----------------------------------------
    async def graph(self, workflow: str | None = None) -> WorkflowGraph:
        """The workflow's tasks with their plan verdicts, grouped as sequences and parallel branches,
        and the edges of its execution order (engine/shape.py)."""
        ...

    def timeline(self, run: str | None = None, workflow: str | None = None) -> Timeline:
        """The apply ``run`` names (its id or short id, or one of its runs'), else the newest, on a time
        axis with its critical path (engine/timing.py). NotFoundError when there is none."""
        ...

    def run_stats(self, workflow: str | None = None, last: int = 20) -> RunStats:
        """Each task's runs, cache hit rate and durations over the last ``last`` applies."""
        ...

    # -- workspaces -------------------------------------------------------------------------------
    async def fork(self, name: str, workflow: str | None = None, *, ttl: float | None = None) -> WorkspaceRecord:
        """Apply the workflow and create workspace ``name``; ``ttl`` (seconds) overrides ``workspace(ttl=...)``."""
        ...

    async def remove_workspace(self, name: str, workflow: str | None = None, *, force: bool = False) -> WorkspaceRecord:
        """Remove it in any state (reconciled from the effects journal); UnknownWorkspaceError if absent.

        ``force`` deletes the record even when the remove hook fails or a resource's removal is
        uncertain; what could not be removed stays journaled for ``collect_garbage``.
        """
        ...

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]: ...

    def workspace_workflow(self, name: str, workflow: str | None = None) -> str:
        """The workflow that owns workspace ``name``; AmbiguousWorkspaceError when several do."""
        ...

    # -- forks of several, of a live one, in place; outdated; expiry (forks, provenance, reaper) ------
    async def fork_many(
        self, name: str, count: int, workflow: str | None = None, *, ttl: float | None = None
    ) -> list[WorkspaceRecord]:
        """Workspaces ``name-1`` … ``name-count`` from one apply, their create hooks run at once."""
        ...

    async def fork_from(
        self, name: str, source: str, workflow: str | None = None, *, ttl: float | None = None
    ) -> WorkspaceRecord:
        """Workspace ``name`` from workspace ``source``'s machines as they are now (snapshotted)."""
        ...

    async def replace_workspace(
        self, name: str, workflow: str | None = None, *, ttl: float | None = None
    ) -> WorkspaceRecord:
        """Remake ``name`` from the current snapshot, the old machine removed once the new one is ready."""
        ...

    def workspace_outdated(self, record: WorkspaceRecord, plan: WorkflowPlan) -> bool | None:
        """Whether ``plan`` would make the workspace from other runs; None when it recorded none."""
        ...

    async def diff_workspace(self, name: str, workflow: str | None = None) -> WorkspaceDiff:
        """Which tasks the workflow would now run differently for this workspace, and why."""
        ...

    async def reap(self, dry_run: bool = False, *, implicit: bool = False) -> ReapReport:
        """Remove expired workspaces and stop idle ones. ``implicit``: only when something is due
        and the writer lock is free at once (any command; nothing loaded when nothing is due)."""
        ...

    # -- operations -------------------------------------------------------------------------------
    def list_operations(self, workflow: str | None = None) -> list[OperationInfo]: ...
    def list_workspace_operations(self, workflow: str | None = None) -> list[OperationInfo]: ...

    async def run_operation(
        self, operation: str, input: dict[str, object] | None = None, workflow: str | None = None
    ) -> JsonValue: ...

    async def run_workspace_operation(
        self,
        workspace: str,
        operation: str,
        input: dict[str, object] | None = None,
        workflow: str | None = None,
        *,
        start: bool = False,
    ) -> JsonValue:
        """Run it; a stopped workspace is refused in one line (``start``: started first), a missing one too."""
        ...

    # -- a workspace's life after fork: live status, stop and start, shell and exec -----------------
    async def probe_workspaces(
        self, workspaces: Sequence[WorkspaceRecord], *, timeout: float | None = None
    ) -> dict[str, LiveStatus]:
        """Each workspace's live status (by record id): its providers asked in parallel, all of them
        answering within ``timeout`` seconds (default 2) or shown ``unknown``."""
        ...

    async def stop_workspace(self, name: str, workflow: str | None = None) -> LiveStatus:
        """Stop its machines (journaled); RigError when its provider has nothing to stop. Its status after."""
        ...

    async def start_workspace(self, name: str, workflow: str | None = None) -> LiveStatus: ...

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
        """Run ``argv`` (None: a shell) in the workspace's machine on this process's stdin, stdout and
        stderr; its exit code. Call it with no signal handling of your own installed (see
        ``provider_api.SupportsInteractive``)."""
        ...

    async def connect_target(
        self, name: str, workflow: str | None, primitives: Sequence[str], *, start: bool = True
    ) -> ConnectTarget:
        """The workspace's machine for ``rig ssh-proxy``/``forward``/``cp`` (engine/connect.py): started
        first when stopped (``start``), refused in one line when its provider lacks one of ``primitives``."""
        ...

    # -- the cache ----------------------------------------------------------------------------------
    async def list_cache(self, workflow: str | None = None) -> list[CacheEntry]: ...
    async def explain(self, workflow: str | None = None, task: str | None = None) -> list[NodeExplanation]: ...
    async def invalidate(self, workflow: str | None = None, task: str | None = None, all: bool = False) -> int: ...
    async def clear_cache(self, workflow: str | None = None, scope: str = "all") -> int: ...
    async def list_snapshots(self, workflow: str | None = None) -> list[JsonObject]: ...

    # -- garbage ------------------------------------------------------------------------------------
    async def collect_garbage(self, dry_run: bool = False, forget_unreachable: bool = False) -> GcReport:
        """Delete what rig made and nothing live refers to (see engine/garbage.py); ``dry_run`` lists it;
        ``forget_unreachable`` marks what no provider can be asked about forgotten instead of failing."""
        ...

    # -- the run history (engine/history.py): rig runs, rig logs ------------------------------------
    def list_applies(self, workflow: str | None = None, limit: int | None = 20) -> list[AppliedRun]:
        """Applies of ``workflow`` (of every workflow when None), newest first, each with what its
        tasks did. Never waits for the writer lock: an apply in progress shows as ``running``."""
        ...

    def find_apply(self, ref: str | None = None, workflow: str | None = None) -> AppliedRun:
        """The apply ``ref`` names (its id, or its end: the short id), or the newest one."""
        ...

    def select_logs(self, workflow: str | None = None, task: str | None = None, run: str | None = None) -> LogSelection:
        """Which runs ``rig logs`` shows: ``run`` (a run's or an apply's id, or its end), else ``task``'s
        newest run, else every run of the newest apply. NotFoundError when there is none."""
        ...

    def read_logs(
        self, selection: LogSelection, *, follow: bool = False, as_bytes: bool = False
    ) -> Iterator[LogUpdate]:
        """The selection's stored output, a page at a time; ``follow`` keeps reading runs in progress
        (and an apply's new runs) until they are over, or ``interrupt()``. ``as_bytes``: as the
        stored UTF-8 in bounded pieces (``LogUpdate.pieces``), not chunks of text."""
        ...


__all__ = ["Engine"]
