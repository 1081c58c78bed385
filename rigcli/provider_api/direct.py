"""Optional plugin hooks that exist only for speed: attach and status from a config, without a controller."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from rigcli.provider_api.effects import EffectEntry, EffectJournal


@runtime_checkable
class SupportsDirectAttach(Protocol):
    """Optional, on the plugin: ``SupportsInteractive.attach`` from a definition's resolved config
    alone, without a controller, storage or the state (``rig shell``/``rig exec`` of a plain case:
    ``cli/commands/attach.py``, with what the config says taken from rig's cache when it holds).

    Return None, having started nothing, whenever the ordinary way should answer instead: the
    resource is not a machine this config reaches, the machine does not run, the daemon does not
    answer, anything unusual (that way then says what is wrong, in its own words). Once the
    program has started, behave exactly as ``attach`` does: its exit code, or ``RigError``. Import
    only what that takes, at call time: the point is a short start. ``state_dir`` is the setup's
    ``state_dir``: where the project's state keeps the provider's files. ``effects`` is the setup's
    journal (no owner): a program started in the machine that could outlive a killed rig (a
    container's exec) is journaled there before it starts (``EXEC_EFFECT``) and marked deleted once
    it ended, as ``attach`` does with ``setup.effects``.
    """

    def attach_directly(
        self,
        config: Mapping[str, Any],
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        state_dir: str,
        effects: EffectJournal,
    ) -> int | None: ...


@runtime_checkable
class SupportsDirectConnect(Protocol):
    """Optional, on the plugin: the connect primitives (``rigcli.provider_kit.connect``) of one machine
    from a definition's resolved config alone, without a controller, storage or the state (``rig
    ssh-proxy``/``cp``/``forward`` of a plain case: ``cli/commands/reach.py``). ``resource`` is the
    workspace's journaled machine; ``state_dir`` as for ``attach_directly``.

    Return an object offering the primitives for ``resource`` (and ``close()``), or None, having
    started nothing, whenever the ordinary way should answer: the machine is not running (that way
    starts it), the config does not reach it, anything unusual. Import only what that takes, at call time.
    """

    def connect_directly(
        self, config: Mapping[str, Any], resource: EffectEntry, *, state_dir: str
    ) -> object | None: ...


class DirectStatus(Protocol):
    """What ``SupportsDirectStatus.status_directly`` gives: one definition's answers, as its controller's."""

    def checks(self) -> Sequence[Mapping[str, Any]]:
        """The checks a plan would get from ``SupportsChecks.checks``, as far as the provider
        fingerprint reads them (``id``, ``status``, ``fingerprint``/``value``), asking nothing remote
        that could change them."""
        ...

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool | None:
        """``SupportsArtifactValidation.validate_artifact``; None where that would raise."""
        ...

    def probe(self, project_dir: str, resources: Sequence[EffectEntry]) -> Mapping[str, tuple[str, str]]:
        """``SupportsStatus.probe``, each answer as ``(state, detail)`` (raising means ``unknown`` for
        all, with why). Called on a thread of its own while ``validate_artifact`` may be asked, and
        after ``close``: a probe keeps a connection of its own."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class SupportsDirectStatus(Protocol):
    """Optional, on the plugin: a plan's provider checks and artifact validations, and live status,
    from a definition's resolved config alone (``rig plan``/``rig ls`` answered from rig's cache,
    ``rigcli/cache/``, which asks it while every other input of the remembered plans is unchanged,
    and probes through it). ``state_dir`` is the setup's ``state_dir``: where the project's state
    keeps the provider's files. Return None where the controller could not be made; import only
    what that takes, at call time."""

    def status_directly(self, config: Mapping[str, Any], *, state_dir: str) -> DirectStatus | None: ...
