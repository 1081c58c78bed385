"""Operation inputs: describe pydantic input models and validate raw input against them."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rigcli.authoring.inputs import WorkspaceRef
from rigcli.authoring.operations import OperationDefinition
from rigcli.engine.results import OperationInfo
from rigcli.errors import InputError
from rigcli.jsonutil import JsonValue, to_plain_json
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    from pydantic import BaseModel

if TYPE_CHECKING:
    import pydantic
else:
    pydantic = lazy_module("pydantic")


# Turns a workspace name in an input into the stored workspace ({"name", "ctx"}).
WorkspaceResolver = Callable[[str], dict[str, JsonValue]]
# What pydantic puts before a validator's message (a ValueError's, an assert's).
_PYDANTIC_KINDS = ("Value error, ", "Assertion failed, ")


def operation_info(workflow: str, definition: OperationDefinition) -> OperationInfo:
    schema = None
    if definition.input is not None:
        described = to_plain_json(definition.input.model_json_schema())
        assert isinstance(described, dict)
        schema = described
    return OperationInfo(
        id=definition.id,
        workflow=workflow,
        workspace=definition.workspace,
        title=definition.title,
        description=definition.description,
        input_model=definition.input,
        input_schema=schema,
    )


def _is_workspace_ref(annotation: object) -> bool:
    if annotation is WorkspaceRef:
        return True
    return any(_is_workspace_ref(arg) for arg in typing.get_args(annotation))


def workspace_fields(model: type[BaseModel]) -> list[str]:
    return [name for name, field in model.model_fields.items() if _is_workspace_ref(field.annotation)]


def validate_input(
    definition: OperationDefinition, raw: Mapping[str, object], resolve_workspace: WorkspaceResolver
) -> BaseModel | None:
    """The validated input model (or the raw dict when the operation declares no input)."""
    if not isinstance(raw, dict):
        raise InputError(f"Operation {definition.id} input must be an object")
    raw = {key: value for key, value in raw.items() if key != "workflow"}
    model = definition.input
    if model is None:
        if raw:
            raise InputError(f"Operation {definition.id} does not accept input {', '.join(sorted(raw))}")
        return None
    values = dict(raw)
    for name in workspace_fields(model):
        value = values.get(name)
        if isinstance(value, str):
            values[name] = resolve_workspace(value)

    try:
        return model.model_validate(values)
    except pydantic.ValidationError as exc:
        issues = []
        for error in exc.errors():
            location = ".".join(str(part) for part in error.get("loc", ())) or "input"
            issues.append(f"{location}: {_without_kind(error.get('msg', 'invalid'))}")
        raise InputError(f"Invalid input for operation {definition.id}: {'; '.join(issues)}") from None


def _without_kind(message: str) -> str:
    """A validator's own words, without the kind pydantic puts before them ("Value error, ...")."""
    for kind in _PYDANTIC_KINDS:
        if message.startswith(kind):
            return message[len(kind) :]
    return message


__all__ = ["WorkspaceResolver", "operation_info", "validate_input", "workspace_fields"]
