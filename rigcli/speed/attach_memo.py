"""What ``rig shell``/``rig exec`` need of a project's config, remembered: a program in a workspace without loading it.

Running ``true`` in a docker workspace is two requests to the daemon; the full way first imports
rig's DSL and the project's code, compiles every workflow, opens and checks the state and makes
a controller (~150 ms of a ~220 ms ``rig exec``, where ``docker exec`` takes ~70 ms). What it
needs of the config is small: whether the workflow defines its own ``shell``/``exec`` workspace
operation (which then runs instead, DESIGN §11), and how each of its provider definitions is
configured. A full load (``engine/memo.py``) keeps that in the project's memo (``task_names``,
section ``attach``, stamped with the project's files; ``engine/memo.py`` writes this form), by
workflow::

    {"operations": ["shell", ...], "providers": [[provider_id, config or null], ...]}

A config is kept as written, never resolved: ``env()`` and ``secret()`` stay references
(``["env", name, default, is_secret]``), read from the environment when the program starts, as
the full way reads them, so no secret reaches the file and a changed variable is honoured;
literals are ``["v", value]``, mappings ``["map", [[key, value], ...]]``, lists ``["list", [...]]``.
A definition whose config holds anything else (a resolver function) or brings its plugin inline
is null: only the full way can use it. Like the task names, what a config computes from the
environment when it is imported is seen as it was at that load.
"""

from __future__ import annotations

from collections.abc import Mapping

ATTACH_SECTION = "attach"


class Remembered:
    """One workflow's remembered answer: its own workspace operations and provider definitions."""

    __slots__ = ("operations", "providers")

    def __init__(self, operations: list[str], providers: list[tuple[str, object]]) -> None:
        self.operations = operations
        self.providers = providers  # (provider id, encoded config or None), in scope order

    def configs_for(self, provider_id: str) -> list[object] | None:
        """The encoded configs of ``provider_id``'s definitions; None if one cannot be used lean."""
        found = [config for pid, config in self.providers if pid == provider_id]
        return None if any(config is None for config in found) else found


def workflow_entry(section: object, workflow: str) -> Remembered | None:
    """``workflow``'s entry in a recalled ``attach`` section; None when absent or malformed."""
    entry = section.get(workflow) if isinstance(section, dict) else None
    if not isinstance(entry, dict):
        return None
    operations, providers = entry.get("operations"), entry.get("providers")
    if not isinstance(operations, list) or not all(isinstance(item, str) for item in operations):
        return None
    if not isinstance(providers, list):
        return None
    pairs: list[tuple[str, object]] = []
    for item in providers:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            return None
        pairs.append((item[0], item[1]))
    return Remembered(list(operations), pairs)


class Unresolvable(Exception):
    """A remembered config that cannot be resolved here (a variable missing, a shape not ours)."""


def resolve(encoded: object, environ: Mapping[str, str], secrets: list[str]) -> object:
    """The config as the full way resolves it (``ProviderDefinition.resolve_config``); each secret
    read is appended to ``secrets`` (for masking). Raises ``Unresolvable``."""
    if not isinstance(encoded, list) or not encoded:
        raise Unresolvable(encoded)
    tag = encoded[0]
    if tag == "v" and len(encoded) == 2:
        return encoded[1]
    if tag == "env" and len(encoded) == 4:
        return _variable(encoded[1], encoded[2], encoded[3], environ, secrets)
    if tag == "map" and len(encoded) == 2 and isinstance(encoded[1], list):
        resolved: dict[str, object] = {}
        for pair in encoded[1]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Unresolvable(pair)
            resolved[str(pair[0])] = resolve(pair[1], environ, secrets)
        return resolved
    if tag == "list" and len(encoded) == 2 and isinstance(encoded[1], list):
        return [resolve(item, environ, secrets) for item in encoded[1]]
    raise Unresolvable(encoded)


def _variable(name: object, default: object, secret: object, environ: Mapping[str, str], secrets: list[str]) -> str:
    if not isinstance(name, str) or not (default is None or isinstance(default, str)):
        raise Unresolvable(name)
    value = environ.get(name)
    if value is None or value == "":
        if default is None:
            raise Unresolvable(name)  # the full way says which variable is missing
        value = default
    if secret:
        secrets.append(value)
    return value


__all__ = ["ATTACH_SECTION", "Remembered", "Unresolvable", "resolve", "workflow_entry"]
