"""Live status through the plugins' status hooks (``SupportsDirectStatus``), without a controller or the config.

``rig ls`` probes every workspace's machines; when each provider among them has one definition in
the workspaces' workflows and its plugin offers the hook, the probes go through it (every
provider on a thread of its own, all of them together bounded by ``liveness.PROBE_SECONDS``, as
``engine/liveness.py`` does with controllers). The threads are ``_thread``'s: a probe that never
answers must not keep rig alive, and ``threading`` would cost this path more than the probe.
"""

from __future__ import annotations

import _thread
import time

from rigcli.engine.live_summary import resources_in, summarize_machines
from rigcli.errors import RigError, describe_exception

TYPE_CHECKING = False  # not typing's: a remembered listing's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from rigcli.provider_api.direct import DirectStatus
    from rigcli.provider_api.effects import EffectEntry

PROBE_SECONDS = 2.0  # engine/liveness.py:PROBE_SECONDS (a test holds them equal)
Live = tuple[str, str]  # a workspace's live status: (state, detail)
Record = dict[str, object]  # a workspace as its record's JSON


class _Probe:
    """One provider's probe of its machines, on a thread of its own (``engine/liveness.py:_Probe``)."""

    def __init__(self, provider: DirectStatus, project_dir: str, entries: list[EffectEntry]) -> None:
        self.provider = provider
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
        try:
            self.answers = dict(self.provider.probe(self.project_dir, self.entries))
        except Exception as exc:  # a provider's failure is its machines' "unknown", not rig's
            self.error = str(exc) if isinstance(exc, RigError) else describe_exception(exc)
        finally:
            self.done = True
            self._finished.release()


class DirectProbes:
    """The probes of ``records``' machines, one per provider, each through the one hook of it among
    ``scoped`` (indexes into ``providers``); ``make`` gives None when a provider has none there."""

    def __init__(self, probes: list[_Probe]) -> None:
        self._probes = probes
        self._deadline = 0.0

    @classmethod
    def make(
        cls,
        providers: Sequence[DirectStatus],
        provider_ids: Sequence[str],
        scoped: set[int],
        project_dir: str,
        records: Sequence[Record],
    ) -> DirectProbes | None:
        by_provider: dict[str, list[EffectEntry]] = {}
        for record in records:
            for resource in resources_in(record["resources"]):  # type: ignore[arg-type]
                by_provider.setdefault(resource.provider_id, []).append(resource.entry)
        probes: list[_Probe] = []
        for provider_id, entries in by_provider.items():
            found = [index for index in sorted(scoped) if provider_ids[index] == provider_id]
            if len(found) != 1:
                return None
            probes.append(_Probe(providers[found[0]], project_dir, entries))
        return cls(probes)

    def start(self) -> None:
        self._deadline = time.monotonic() + PROBE_SECONDS
        for probe in self._probes:
            probe.start()

    def answers(self, records: Sequence[Record]) -> dict[str, Live]:
        """Each workspace's live status, as ``engine/liveness.py:probe_records`` gives it (every probe
        answering by the deadline or not at all)."""

        for probe in self._probes:
            probe.join(self._deadline - time.monotonic())
        found: dict[str, Live] = {}
        for probe in self._probes:
            if probe.done and probe.answers is not None:
                found.update(probe.answers)
                continue
            why = probe.error if probe.done and probe.error else f"no answer within {PROBE_SECONDS:g}s"
            for entry in probe.entries:
                found[entry["id"]] = ("unknown", why)
        return {
            str(record["id"]): summarize_machines(record["resources"], str(record["status"]), found)  # type: ignore[arg-type]
            for record in records
        }


__all__ = ["PROBE_SECONDS", "DirectProbes"]
