"""Operation inputs on the command line: JSON schema fields -> --dash-case options and positionals.

Typer cannot know an operation's options statically, so ``rig op`` hands the words after the
operation to this parser. It converts types and checks choices; defaults and every other rule
stay with the pydantic model, which the engine validates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from rigcli.authoring.inputs import POSITION_KEY, WORKSPACE_KEY
from rigcli.errors import UsageError
from rigcli.speed.records import lazy_dataclass

SCALARS = ("string", "integer", "number", "boolean")
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


@lazy_dataclass(frozen=True)
class InputField:
    name: str
    kind: str  # string | integer | number | boolean | workspace | array | json
    required: bool = False
    default: Any = None
    has_default: bool = False
    description: str | None = None
    choices: tuple[str, ...] = ()
    position: int | None = None
    item_kind: str = "string"  # the kind of each element of an array field

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def label(self) -> str:
        return self.name if self.position is not None else self.flag


@lazy_dataclass
class ParsedArgs:
    values: dict[str, Any] = field(default_factory=dict)
    help: bool = False

    def missing(self, fields: Sequence[InputField]) -> list[InputField]:
        return [item for item in fields if item.required and item.name not in self.values]


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """Follow $ref/allOf and drop the null branch of Optional, keeping sibling keys."""
    node = dict(schema)
    ref = node.pop("$ref", None)
    if isinstance(ref, str):
        node = {**_resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs), **node}
    for key in ("allOf", "anyOf", "oneOf"):
        branches = [item for item in node.get(key, ()) if item.get("type") != "null"]
        if branches and (key == "allOf" or len(branches) == 1):
            node.pop(key)
            node = {**_resolve(branches[0], defs), **node}
    return node


def _kind(node: Mapping[str, Any]) -> str:
    if node.get(WORKSPACE_KEY):
        return "workspace"
    kind = node.get("type")
    if kind in SCALARS or kind == "array":
        return str(kind)
    if "enum" in node or "const" in node:
        return "string"
    return "json"


def fields_from_schema(schema: Mapping[str, Any] | None) -> list[InputField]:
    """The CLI view of an operation's input model (its pydantic JSON schema)."""
    if not schema:
        return []
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    fields = []
    for name, raw in (schema.get("properties") or {}).items():
        node = _resolve(raw, defs)
        kind = _kind(node)
        item_kind = _kind(_resolve(node.get("items", {}), defs)) if kind == "array" else "string"
        choices = node.get("enum") or ([node["const"]] if "const" in node else [])
        position = node.get(POSITION_KEY)
        fields.append(
            InputField(
                name=name,
                kind=kind,
                required=name in required,
                default=node.get("default"),
                has_default="default" in node,
                description=node.get("description") or node.get("title"),
                choices=tuple(str(choice) for choice in choices),
                position=int(position) if position is not None else None,
                item_kind=item_kind,
            )
        )
    return fields


def convert(item: InputField, raw: str, op_id: str, *, kind: str | None = None) -> Any:
    """One command-line word as the field's type; a clear usage error when it does not fit."""
    kind = kind or item.kind
    if item.choices and raw not in item.choices:
        raise UsageError(f"{item.label} must be one of: {', '.join(item.choices)} (got {raw!r})")
    if kind == "boolean":
        word = raw.lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise UsageError(f"{item.label} expects true or false")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            raise UsageError(f"{item.label} expects a whole number") from None
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise UsageError(f"{item.label} expects a number") from None
    if kind == "json":
        try:
            return json.loads(raw)
        except ValueError:
            raise UsageError(f"{item.label} expects JSON for operation {op_id}") from None
    return raw


def _store(values: dict[str, Any], item: InputField, raw: str, op_id: str) -> None:
    if item.kind == "array":
        values.setdefault(item.name, []).append(convert(item, raw, op_id, kind=item.item_kind))
    else:
        values[item.name] = convert(item, raw, op_id)


def parse_operation_args(op_id: str, fields: Sequence[InputField], args: Sequence[str]) -> ParsedArgs:
    """``--flag value``, ``--flag=value``, ``--flag``/``--no-flag`` for booleans, positionals, ``--``."""
    by_flag = {item.flag: item for item in fields}
    positionals = sorted((item for item in fields if item.position is not None), key=lambda item: item.position or 0)
    parsed = ParsedArgs()
    words = list(args)
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            rest.extend(words[index:])
            break
        if word in ("-h", "--help"):
            parsed.help = True
            continue
        if not word.startswith("--"):
            rest.append(word)
            continue
        name, has_value, inline = word.partition("=")
        item = by_flag.get(name)
        if item is None and name.startswith("--no-"):
            negated = by_flag.get("--" + name[5:])
            if negated is not None and negated.kind == "boolean" and not has_value:
                parsed.values[negated.name] = False
                continue
        if item is None:
            raise UsageError(f"Unknown option {name} for operation {op_id}")
        if item.kind == "boolean" and not has_value:
            parsed.values[item.name] = True
            continue
        if not has_value:
            if index >= len(words) or words[index].startswith("--"):
                raise UsageError(f"{item.flag} requires a value")
            inline = words[index]
            index += 1
        _store(parsed.values, item, inline, op_id)
    _assign_positionals(op_id, positionals, rest, parsed)
    return parsed


def _assign_positionals(op_id: str, positionals: list[InputField], rest: list[str], parsed: ParsedArgs) -> None:
    queue = list(rest)
    for item in positionals:
        if not queue:
            break
        if item.kind == "array":  # a list positional takes every remaining word
            for word in queue:
                _store(parsed.values, item, word, op_id)
            queue = []
        else:
            _store(parsed.values, item, queue.pop(0), op_id)
    if queue:
        raise UsageError(f"Unexpected positional argument {queue[0]} for operation {op_id}")


def usage_line(command: str, fields: Sequence[InputField]) -> str:
    words = [command]
    for item in sorted((f for f in fields if f.position is not None), key=lambda f: f.position or 0):
        name = item.name.upper() + ("..." if item.kind == "array" else "")
        words.append(name if item.required else f"[{name}]")
    if any(item.position is None for item in fields):
        words.append("[OPTIONS]")
    return " ".join(words)


def option_rows(fields: Sequence[InputField]) -> list[list[str]]:
    """Rows for the operation's help: option, type or choices, default, description."""
    rows = []
    for item in fields:
        label = item.label
        if item.kind == "boolean" and item.position is None:
            label = f"{item.flag} / --no-{item.flag[2:]}"
        kind = "|".join(item.choices) if item.choices else ("workspace name" if item.kind == "workspace" else item.kind)
        if item.kind == "array":
            kind = f"{item.item_kind} (repeatable)"
        default = "required" if item.required else (json.dumps(item.default) if item.has_default else "")
        rows.append([label, kind, default, item.description or ""])
    return rows


__all__ = [
    "InputField",
    "ParsedArgs",
    "convert",
    "fields_from_schema",
    "option_rows",
    "parse_operation_args",
    "usage_line",
]
