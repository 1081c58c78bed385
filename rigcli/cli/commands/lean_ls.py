"""``rig ls`` (workspaces) without the config or the engine: what the last full ``rig ls`` planned, asked again.

The full way (``listing.py``) loads the config, opens the store and plans every workflow to say
how much is cached and which workspace is outdated: most of a ``rig ls``, where ``docker ps`` is
one request. A plan is a function of its inputs, and the full way remembers each of them as it
can be read again cheaply (``engine/listing_memo.py``, the form in ``speed/listing_memo.py``):

- the project's files (``rig_config.py``, the helpers it imported, ``.env``): the memo's stamps;
- the run journal: one query's stamp (``state/state_file.py:runs_stamp``), taken before planning;
- the clock: the first moment a reused run's ``cache_ttl`` runs out;
- each provider definition: its config resolved from the environment now (no secrets: nothing
  is kept for a project with one), the installed plugin, and what its checks give the provider
  fingerprint — asked of the plugin's ``status_directly`` (``SupportsDirectStatus``);
- each artifact the plans validated: validated again through the same hook, with the same answer.

When all read as they were, the plans would say what they said, and this answers from them: the
workspaces and their effects are read from the file as their records' JSON
(``state/workspace_file.py``), the machines probed through the same hook (every provider on a
thread of its own, all of them together bounded by ``PROBE_SECONDS``, as ``engine/liveness.py``
does), and ``listing.py``'s writer prints the answer. No typing, dataclasses, json, re, pathlib,
contextlib or threading on this path (a test holds it to that): they cost more than the rest of
it. Anything else — a workspace due to expire (every command that opens the state reaps), the
lock held, a filter the memo does not know, a provider without the hook, a daemon that answers a
validation otherwise — returns None before a byte is written, and the full way runs.
"""

from __future__ import annotations

import _thread
import os
import time

from rigcli.cli.spec import GlobalOptions

# Not typing.TYPE_CHECKING: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rigcli.cli.commands.listing import Live, WorkflowRow
    from rigcli.provider_api import DirectStatus, EffectEntry
    from rigcli.speed.listing_memo import Listed

PROBE_SECONDS = 2.0  # engine/liveness.py:PROBE_SECONDS (a test holds them equal)
Record = dict[str, object]  # a workspace as its record's JSON


def list_lean(opts: GlobalOptions, *, probe: bool) -> int | None:
    """Print ``rig ls``'s answer and return 0, or print nothing and return None (the full way answers)."""
    from rigcli._version import __version__
    from rigcli.cli.commands.lean_start import lean_start
    from rigcli.speed.listing_memo import LISTING_SECTION, Listed, environment_stamp
    from rigcli.speed.task_names import recall_section

    start = lean_start(opts)
    if start is None or lock_held(start.state_path):
        return None
    section = recall_section(
        start.cache_dir, version=__version__, config_path=start.config_path, section=LISTING_SECTION
    )
    listed = Listed.read(section)
    if listed is None or (listed.until is not None and time.time() >= listed.until):
        return None
    if listed.environment != environment_stamp():  # a config may compute from any variable
        return None
    names = listed.workflows
    if opts.workflow is not None:
        if opts.workflow not in names:
            return None
        names = [opts.workflow]
    records = _read_state(start.state_path, listed.state)
    if records is None:
        return None
    daemons = definitions_now(listed)
    if daemons is None:
        return None
    rows = _rows(listed, names, records)
    shown = [record for row in rows for record in row.workspaces]
    try:
        # The probe starts first, on a connection of its own: the daemon lists its containers while
        # this validates the plans' artifacts and imports the writer.
        probing = _probes(listed, daemons, shown) if probe else []
        if probing is None:
            return None
        deadline = time.monotonic() + PROBE_SECONDS
        for item in probing:
            item.start()
        for index, ref, valid in listed.validations:
            if daemons[index].validate_artifact(ref) is not valid:
                return None
    finally:
        for daemon in daemons:
            daemon.close()
    from rigcli.cli.commands.listing import show_workspaces

    live = _live(shown, probing, deadline) if probe else None
    return show_workspaces(opts, rows, live, ("sqlite", start.state_path), None)


def lock_held(state_path: str) -> bool:
    """Whether the lock file names a holder (``state/lock.py:peek_holder`` then says whether it is alive,
    and the full way which one): a lock released cleanly leaves it empty."""
    try:
        return os.path.getsize(f"{state_path}.lock") > 0
    except OSError:
        return False


def _read_state(path: str, stamp: list[object]) -> list[Record] | None:
    """Every workspace with its live effects, when nothing is due to expire and the run journal is as
    the plans read it; else None."""
    from rigcli.state.state_file import Error, journal_as_read, open_current

    db = open_current(path)
    if db is None:
        return None
    try:
        if not journal_as_read(db, stamp):
            return None
        from rigcli.state.workspace_file import listed_workspaces

        try:
            return listed_workspaces(db)
        except (Error, ValueError):  # what the full way would report on its own terms
            return None
    finally:
        db.close()


def definitions_now(listed: Listed) -> list[DirectStatus] | None:
    """Each remembered definition's plugin hook, when its config resolves, its plugin is installed and
    its checks read as the plans had them; None (with every hook made closed) otherwise."""
    from rigcli.speed.attach_memo import Unresolvable, resolve
    from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values, load
    from rigcli.speed.listing_memo import normalized_checks
    from rigcli.state.paths import plugin_index_path

    made: list[DirectStatus] = []
    try:
        installed = entry_point_values(PROVIDERS_GROUP, plugin_index_path())
        for provider_id, encoded, resolved, entry_point, checks in listed.definitions:
            secrets: list[str] = []
            config = resolve(encoded, os.environ, secrets)
            if secrets or config != resolved or installed.get(str(provider_id)) != entry_point:
                raise Unresolvable(provider_id)
            hook = getattr(load(str(entry_point)), "status_directly", None)
            daemon = hook(config) if callable(hook) else None
            if daemon is None:
                raise Unresolvable(provider_id)
            made.append(daemon)
            if normalized_checks(list(daemon.checks())) != checks:
                raise Unresolvable(provider_id)
    except Exception:  # a plugin that fails to load or answer: the full way says so, in its words
        for daemon in made:
            daemon.close()
        return None
    return made


def _rows(listed: Listed, names: Sequence[str], records: Sequence[Record]) -> list[WorkflowRow]:
    from rigcli.cli.commands.listing import WorkflowRow
    from rigcli.engine.outdated import outdated_against

    rows: list[WorkflowRow] = []
    for name in names:
        plan = listed.plans[name]
        mine = sorted(
            (record for record in records if record["workflow"] == name), key=lambda record: str(record["name"])
        )
        row = WorkflowRow(name, mine, cached_node_count=plan.cached, node_count=plan.nodes)
        row.outdated = {str(record["id"]): outdated_against(record["provenance"], plan.finals) for record in mine}
        rows.append(row)
    return rows


class _Probe:
    """One provider's probe of its machines, on a thread of its own (``engine/liveness.py:_Probe``),
    started with ``_thread``: a thread that never answers must not keep rig alive, and the
    threading module would cost this path more than the probe."""

    def __init__(self, daemon: DirectStatus, project_dir: str, entries: list[EffectEntry]) -> None:
        self.daemon = daemon
        self.project_dir = project_dir
        self.entries = entries
        self.answers: dict[str, Live] | None = None
        self.error: str | None = None
        self.done = False
        self._finished = _thread.allocate_lock()

    def start(self) -> None:
        self._finished.acquire()
        _thread.start_new_thread(self._run, ())

    def join(self, timeout: float) -> None:
        if self._finished.acquire(timeout=max(timeout, 0.0)):
            self._finished.release()

    def _run(self) -> None:
        from rigcli.errors import RigError, describe_exception

        try:
            self.answers = dict(self.daemon.probe(self.project_dir, self.entries))
        except Exception as exc:  # a provider's failure is its machines' "unknown", not rig's
            self.error = str(exc) if isinstance(exc, RigError) else describe_exception(exc)
        finally:
            self.done = True
            self._finished.release()


def _probes(listed: Listed, daemons: Sequence[DirectStatus], records: Sequence[Record]) -> list[_Probe] | None:
    """A probe per provider of the workspaces' machines, each through the one definition of it in
    their workflows' scopes; None when a provider has none there (the full way asks a bare one)."""
    from rigcli.engine.live_summary import resources_in

    by_provider: dict[str, list[EffectEntry]] = {}
    for record in records:
        for resource in resources_in(record["resources"]):  # type: ignore[arg-type]
            by_provider.setdefault(resource.provider_id, []).append(resource.entry)
    scoped = {index for record in records for index in listed.plans[str(record["workflow"])].scoped}
    probes: list[_Probe] = []
    for provider_id, entries in by_provider.items():
        found = [index for index in sorted(scoped) if listed.definitions[index][0] == provider_id]
        if len(found) != 1:
            return None
        probes.append(_Probe(daemons[found[0]], listed.project_dir, entries))
    return probes


def _live(records: Sequence[Record], probes: Sequence[_Probe], deadline: float) -> dict[str, Live]:
    """Each workspace's live status, as ``engine/liveness.py:probe_records`` gives it (the probes
    started, all of them answering by ``deadline`` or not at all)."""
    from rigcli.engine.live_summary import summarize_machines

    for probe in probes:
        probe.join(deadline - time.monotonic())
    answers: dict[str, Live] = {}
    for probe in probes:
        found = probe.answers if probe.done else None
        if found is None:
            why = probe.error if probe.done and probe.error else f"no answer within {PROBE_SECONDS:g}s"
            for entry in probe.entries:
                answers[entry["id"]] = ("unknown", why)
        else:
            answers.update(found)
    return {
        str(record["id"]): summarize_machines(record["resources"], str(record["status"]), answers)  # type: ignore[arg-type]
        for record in records
    }


__all__ = ["PROBE_SECONDS", "definitions_now", "list_lean", "lock_held"]
