"""The one rule that says a remembered plan still holds: every input it read reads the same now.

A plan's verdicts are a function of the project's files (the memo's stamps, ``memo.py``), rig's
version, the environment (a config may compute from any variable), the run journal, the clock (a
``cache_ttl`` that runs out), each provider definition (its config resolved from the environment,
its plugin, its checks) and each artifact the plan validated. A full plan keeps them as the gates
of its answer (``planning.py``), in this form::

    {"project_dir": str,
     "state": [...],            # the run journal's stamp before planning (state/state_file.py)
     "until": float | null,     # the first moment a reused run's cache_ttl runs out (epoch seconds)
     "environment": str,        # environment_stamp() of the process that planned
     "definitions": [[provider_id, config as written (configs.py), config resolved, entry point,
                      checks], ...],        # one per provider; checks as ``normalized_checks``
     "validations": [[definition index, artifact ref, valid], ...]}   # each one the plan asked

``Gates.read`` checks that form; ``Gates.hold`` is the rule. Nothing is kept for a plan whose
answer depends on more (``planning.py`` says what); a state that is not a SQLite file, a lock
held (the plan would name who runs what), a run left ``running`` (it becomes ``in-doubt`` when
its process dies, which no stamp sees) or a workspace due to expire (every command that opens the
state reaps) makes the rule fail, and the command plans again.
"""

from __future__ import annotations

import os
import time

from rigcli.cache.configs import Unresolvable, resolve
from rigcli.speed.digests import sha256

TYPE_CHECKING = False  # not typing's: a cached answer's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from rigcli.provider_api.direct import DirectStatus

# Environment variables that change how rig draws, never what a plan says.
NOT_INPUTS = ("RIG_RENDER", "RIG_CACHE", "COLUMNS", "LINES")


def environment_stamp() -> str:
    """A digest of every environment variable and its value (never the values themselves: secrets),
    but those in ``NOT_INPUTS``."""
    digest = sha256(b"rig.environment/2")
    for name, value in sorted(os.environ.items()):
        if name in NOT_INPUTS:
            continue
        digest.update(f"\0{name}={value}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def normalized_checks(checks: object) -> list[object]:
    """A definition's checks as a remembered plan's gate compares them: ``[id, status, fingerprint]``
    each. A check failing now (``error``) differs from one that passed: the plan says so, and exits 1
    on it (a plan with a failing check is never kept, ``planning.py``)."""
    found: list[object] = []
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, dict):
            found.append(None)
            continue
        found.append([check.get("id"), check.get("status", "ok"), check.get("fingerprint", check.get("value"))])
    return found


class Gates:
    """A remembered plan's inputs, checked for shape by ``read``; ``hold`` says whether they read the same."""

    __slots__ = ("definitions", "environment", "project_dir", "state", "until", "validations")

    def __init__(
        self,
        project_dir: str,
        state: list[object],
        until: float | None,
        environment: str,
        definitions: list[list[object]],
        validations: list[tuple[int, dict[str, object], bool]],
    ) -> None:
        self.project_dir = project_dir
        self.state = state
        self.until = until
        self.environment = environment
        self.definitions = definitions  # [provider_id, config as written, resolved, entry point, checks]
        self.validations = validations

    @classmethod
    def read(cls, section: object) -> Gates | None:
        if not isinstance(section, dict):
            return None
        project_dir, state, until = section.get("project_dir"), section.get("state"), section.get("until")
        definitions, validations = section.get("definitions"), section.get("validations")
        environment = section.get("environment")
        if not isinstance(environment, str) or not isinstance(project_dir, str) or not isinstance(state, list):
            return None
        if not isinstance(definitions, list) or not isinstance(validations, list):
            return None
        if until is not None and not isinstance(until, (int, float)):
            return None
        if not all(isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) for row in definitions):
            return None
        checked: list[tuple[int, dict[str, object], bool]] = []
        for row in validations:
            if not isinstance(row, list) or len(row) != 3 or not isinstance(row[2], bool):
                return None
            index, ref = row[0], row[1]
            if not isinstance(index, int) or not 0 <= index < len(definitions) or not isinstance(ref, dict):
                return None
            checked.append((index, ref, row[2]))
        return cls(project_dir, state, until, environment, definitions, checked)

    def hold(self, state_path: str, *, offline: bool = False) -> list[DirectStatus] | None:
        """The rule: each provider definition's hook (``SupportsDirectStatus``), opened, when every input
        of the plan reads as it did; None (with every hook closed) when one does not. Offline (a plan
        that asked nothing remote), the providers are not asked either: no hooks, an empty list."""
        if self.until is not None and time.time() >= self.until:
            return None
        if self.environment != environment_stamp() or not journal_as_read(state_path, self.state):
            return None
        if offline:
            return []
        providers = open_hooks(self.definitions, checks_as_kept=True, state_dir=os.path.dirname(state_path))
        if providers is None:
            return None
        try:
            if all(providers[index].validate_artifact(ref) is valid for index, ref, valid in self.validations):
                return providers
        except Exception:  # a provider that fails to answer: the engine says so, in its words
            pass
        for provider in providers:
            provider.close()
        return None


def open_hooks(definitions: list[list[object]], *, checks_as_kept: bool, state_dir: str) -> list[DirectStatus] | None:
    """Each definition's plugin hook (``SupportsDirectStatus``), made from its config resolved now, when
    that reads as kept and its plugin is the one installed then (and, with ``checks_as_kept``, its
    checks read the same); None (with every hook made closed) otherwise."""
    from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values, load
    from rigcli.state.paths import plugin_index_path

    made: list[DirectStatus] = []
    try:
        installed = entry_point_values(PROVIDERS_GROUP, plugin_index_path())
        for provider_id, encoded, resolved, entry_point, checks in definitions:
            secrets: list[str] = []
            config = resolve(encoded, os.environ, secrets)
            if secrets or config != resolved or installed.get(str(provider_id)) != entry_point:
                raise Unresolvable(provider_id)
            hook = getattr(load(str(entry_point)), "status_directly", None)
            provider = hook(config, state_dir=state_dir) if callable(hook) else None
            if provider is None:
                raise Unresolvable(provider_id)
            made.append(provider)
            if checks_as_kept and normalized_checks(list(provider.checks())) != checks:
                raise Unresolvable(provider_id)
    except Exception:  # a plugin that fails to load or answer: a load says so, in its words
        for provider in made:
            provider.close()
        return None
    return made


def journal_as_read(state_path: str, stamp: object) -> bool:
    """Whether the run journal reads as it did when ``stamp`` was taken, with nothing that a stamp
    cannot see: no lock held, no run left ``running``, no workspace due to expire."""
    if lock_held(state_path):
        return False
    from rigcli.state.state_file import journal_as_read as read_the_same
    from rigcli.state.state_file import open_current

    db = open_current(state_path)
    if db is None:
        return False
    try:
        return read_the_same(db, stamp)
    finally:
        db.close()


def lock_held(state_path: str) -> bool:
    """Whether the lock file names a holder (a lock released cleanly leaves it empty)."""
    try:
        return os.path.getsize(f"{state_path}.lock") > 0
    except OSError:
        return False


__all__ = ["Gates", "environment_stamp", "journal_as_read", "lock_held", "normalized_checks", "open_hooks"]
