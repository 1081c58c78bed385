"""A handler description split into named parts, each hashed alone, so a change can be named.

``describe_handler`` gives one value: the handler plus a table of the project definitions it
reaches, which refer to each other by number. Here each definition becomes one part, keyed
``kind:name`` — ``handler:tools.py:install_pkgs``, ``helper:tools.py:_pin``,
``class:models.py:Pkg``, ``module:helpers.py`` — with references to other definitions replaced
by their names, so changing a helper changes the helper's part and not its callers'. A
function's module-level values (``GREETING = "hi"``) are parts of their own
(``global:rig_config.py:GREETING``). Hashes are short: they name what changed, they decide
nothing (the cache key does).
"""

from __future__ import annotations

from rigcli.jsonutil import JsonValue, canonical_json
from rigcli.speed.digests import sha256

PartHashes = dict[str, str]  # "kind:name" -> short hash


def part_hash(value: JsonValue) -> str:
    return sha256(canonical_json(value).encode("utf-8")).hexdigest()[:16]


def handler_parts(description: JsonValue) -> PartHashes:
    """The parts of a ``describe_handler`` result (``{"handler": value, "defs": [...]}``)."""
    if not isinstance(description, dict):
        return {"handler": part_hash(description)}
    defs = description.get("defs")
    definitions = defs if isinstance(defs, list) else []
    names = [_name_of(item, number) for number, item in enumerate(definitions)]

    def named(value: JsonValue) -> JsonValue:
        """``value`` with every reference to a definition spelled as its name."""
        if isinstance(value, dict):
            number = value.get("n")
            if value.get("t") == "ref" and isinstance(number, int) and 0 <= number < len(names):
                return {"t": "ref", "name": names[number]}
            return {key: named(item) for key, item in value.items()}
        if isinstance(value, list):
            return [named(item) for item in value]
        return value

    root = description.get("handler")
    handler_number = root.get("n") if isinstance(root, dict) and root.get("t") == "ref" else None
    parts: PartHashes = {}
    if handler_number is None:  # a partial, a bound method, ...: the value itself is the handler
        parts["handler"] = part_hash(named(root))
    for number, item in enumerate(definitions):
        entry = named(item)
        kind = item.get("kind") if isinstance(item, dict) else None
        if isinstance(entry, dict) and kind == "function":
            entry = dict(entry)
            file = names[number].split(":", 1)[0]
            values = entry.pop("globals", None)
            if isinstance(values, dict):
                # References stay in the function's part (renaming a helper is a change of the
                # function); plain values become parts of their own.
                kept = {key: value for key, value in values.items() if _is_reference(value)}
                for key, value in values.items():
                    if key not in kept:
                        parts[f"global:{file}:{key}"] = part_hash(value)
                if kept:
                    entry["globals"] = kept
        label = "handler" if number == handler_number else {"function": "helper"}.get(str(kind), str(kind))
        parts[f"{label}:{names[number]}"] = part_hash(entry)
    return parts


# The order changes are named in: the code first, then what is written beside it.
_KIND_ORDER = (
    "handler",
    "helper",
    "class",
    "module",
    "global",
    "config",
    "config-stack",
    "output",
    "version",
    "path",
    "provider",
    "checks",
)


def component(key: str) -> str:
    """How people read a part's key: ``handler install_pkgs (tools.py)``, ``config key "python"``."""
    kind, _, name = key.partition(":")
    file, _, inner = name.rpartition(":")
    shown = {
        "handler": f"handler {inner} ({file})" if name else "handler",
        "helper": f"helper {inner}()",
        "class": f"class {inner} ({file})",
        "module": f"module {name}",
        "global": f"global {inner} ({file})",
        "config": f'config key "{name}"',
        "config-stack": "configure levels",
        "output": "output schema",
        "version": "version",
        "path": "task path",
        "provider": f'provider "{name}"',
        "checks": f'provider "{name}" checks',
    }
    return shown.get(kind, key)


def changes(old: PartHashes, new: PartHashes) -> list[tuple[str, str]]:
    """``(component, what happened)`` for each part that differs, most telling first.

    What happened: ``changed``, ``added`` or ``removed``; a provider's own part ``changed`` reads
    ``config changed`` (its checks are a part of their own).
    """

    def order(key: str) -> tuple[int, str]:
        kind = key.partition(":")[0]
        return (_KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER), key)

    found: list[tuple[str, str]] = []
    for key in sorted(set(old) | set(new), key=order):
        if old.get(key) == new.get(key):
            continue
        verb = "changed" if key in old and key in new else "added" if key in new else "removed"
        if verb == "changed" and key.startswith("provider:"):
            verb = "config changed"
        found.append((component(key), verb))
    return found


def _name_of(item: JsonValue, number: int) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else f"#{number}"


def _is_reference(value: JsonValue) -> bool:
    return isinstance(value, dict) and value.get("t") in ("ref", "external", "import-dunder")


__all__ = ["PartHashes", "changes", "component", "handler_parts", "part_hash"]
