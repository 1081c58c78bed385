"""What a full ``rig ls`` planned, as the next one reads it: the form of the memo's ``ls`` section.

``engine/listing_memo.py`` writes it after planning every workflow (through ``engine/memo.py``,
the memo's one writer, stamped with the project's files and ``.env``); ``cli/commands/lean_ls.py``
answers from it while every input of those plans reads the same again::

    {"project_dir": str,
     "state": [...],            # the run journal's stamp before the plans (state/state_file.py)
     "until": float | null,     # the first moment a cached run's cache_ttl runs out (epoch seconds)
     "environment": str,        # environment_stamp() of the process that planned
     "workflows": [name, ...],  # every workflow of the config, in its order
     "plans": {name: [cached_node_count, node_count, [[final task path, run id or null], ...],
                      [index of each definition in its scopes, ...]]},
     "definitions": [[provider_id, config as written (attach_memo), config resolved, entry point,
                      checks], ...],            # one per provider; checks as ``normalized_checks``
     "validations": [[definition index, artifact ref, valid], ...]}   # each one the plans asked

A config is kept resolved only when it holds no secret (then nothing is kept). The plans' cache
keys are the project's files, which the memo's stamps cover, and what a config computes from the
environment when it is imported (``os.environ.get("IMAGE")`` in a task's config): the whole
environment's digest must read the same, or the full way plans again.
"""

from __future__ import annotations

import os

from rigcli.speed.digests import sha256

LISTING_SECTION = "ls"
# {"gates": an ``ls`` section of one workflow, "document": its plan's JSON, "hint": str | None, "sole": bool}
PLAN_SECTION = "plan"


def normalized_checks(checks: object) -> list[object]:
    """A definition's checks as the provider fingerprint reads them (``ProviderSession._check_inputs``):
    ``[id, status, fingerprint]`` each, a daemon that does not answer now being the same provider."""
    found: list[object] = []
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, dict):
            found.append(None)
            continue
        status = check.get("status", "ok")
        found.append(
            [check.get("id"), "ok" if status == "error" else status, check.get("fingerprint", check.get("value"))]
        )
    return found


def environment_stamp() -> str:
    """A digest of every environment variable and its value (never the values themselves: secrets), but
    ``RIG_RENDER``: rig's own switch for how output is drawn, which no plan reads (a piped ``rig graph``
    and a ``rig --json plan`` beside it would otherwise take turns planning again)."""
    digest = sha256(b"rig.ls-environment/1")
    for name, value in sorted(os.environ.items()):
        if name == "RIG_RENDER":
            continue
        digest.update(f"\0{name}={value}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class PlanMemo:
    """One workflow's plan as remembered: its counts, its final tasks' runs, the definitions in its scopes."""

    __slots__ = ("cached", "finals", "nodes", "scoped")

    def __init__(self, cached: int, nodes: int, finals: dict[str, str | None], scoped: list[int]) -> None:
        self.cached = cached
        self.nodes = nodes
        self.finals = finals  # final task path -> the run the plan reuses (None: pending)
        self.scoped = scoped  # indexes into Listed.definitions


class Listed:
    """The ``ls`` section, checked for shape; ``read`` gives None for anything else."""

    __slots__ = ("definitions", "environment", "plans", "project_dir", "state", "until", "validations", "workflows")

    def __init__(
        self,
        project_dir: str,
        state: list[object],
        until: float | None,
        plans: dict[str, PlanMemo],
        definitions: list[list[object]],
        validations: list[tuple[int, dict[str, object], bool]],
        environment: str,
    ) -> None:
        self.project_dir = project_dir
        self.environment = environment
        self.state = state
        self.until = until
        self.workflows = list(plans)
        self.plans = plans
        self.definitions = definitions  # [provider_id, config as written, resolved, entry point, checks]
        self.validations = validations

    @classmethod
    def read(cls, section: object) -> Listed | None:
        if not isinstance(section, dict):
            return None
        project_dir, state, until = section.get("project_dir"), section.get("state"), section.get("until")
        workflows, plans, definitions = section.get("workflows"), section.get("plans"), section.get("definitions")
        validations, environment = section.get("validations"), section.get("environment")
        if not isinstance(environment, str):
            return None
        if not isinstance(project_dir, str) or not isinstance(state, list) or not isinstance(workflows, list):
            return None
        if not isinstance(plans, dict) or not isinstance(definitions, list) or not isinstance(validations, list):
            return None
        if until is not None and not isinstance(until, (int, float)):
            return None
        if not all(isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) for row in definitions):
            return None
        read_plans: dict[str, PlanMemo] = {}
        for name in workflows:
            plan = _plan(plans.get(name), len(definitions)) if isinstance(name, str) else None
            if plan is None:
                return None
            read_plans[name] = plan
        read_validations: list[tuple[int, dict[str, object], bool]] = []
        for row in validations:
            if not isinstance(row, list) or len(row) != 3 or not isinstance(row[2], bool):
                return None
            index, ref = row[0], row[1]
            if not isinstance(index, int) or not 0 <= index < len(definitions) or not isinstance(ref, dict):
                return None
            read_validations.append((index, ref, row[2]))
        return cls(project_dir, state, until, read_plans, definitions, read_validations, environment)


def _plan(plan: object, definitions: int) -> PlanMemo | None:
    if not isinstance(plan, list) or len(plan) != 4:
        return None
    cached, nodes, final, scoped = plan
    if not isinstance(cached, int) or not isinstance(nodes, int) or not isinstance(final, list):
        return None
    if not isinstance(scoped, list) or not all(isinstance(index, int) and 0 <= index < definitions for index in scoped):
        return None
    finals: dict[str, str | None] = {}
    for item in final:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            return None
        if not (item[1] is None or isinstance(item[1], str)):
            return None
        finals[item[0]] = item[1]
    return PlanMemo(cached, nodes, finals, scoped)


__all__ = ["LISTING_SECTION", "PLAN_SECTION", "Listed", "PlanMemo", "environment_stamp", "normalized_checks"]
