"""Operation inputs: describe pydantic input models and validate raw input against them."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from rigcli.authoring.operations import OperationDefinition
from rigcli.engine.results import OperationInfo
from rigcli.errors import InputError


def operation_info(workflow: str, definition: OperationDefinition) -> OperationInfo:
    schema = None
    if definition.input is not None:
        schema = definition.input.model_json_schema()
    return OperationInfo(
        id=definition.id,
        workflow=workflow,
        workspace=definition.workspace,
        title=definition.title,
        description=definition.description,
        input_model=definition.input,
        input_schema=schema,
    )


def _is_workspace_ref(annotation: Any) -> bool:
    from rigcli.authoring.inputs import WorkspaceRef

    if annotation is WorkspaceRef:
        return True
    return any(_is_workspace_ref(arg) for arg in typing.get_args(annotation))


def workspace_fields(model: Any) -> list[str]:
    return [name for name, field in model.model_fields.items() if _is_workspace_ref(field.annotation)]


def validate_input(
    definition: OperationDefinition, raw: dict[str, Any], resolve_workspace: Callable[[str], dict[str, Any]]
) -> Any:
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
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        issues = []
        for error in exc.errors():
            location = ".".join(str(part) for part in error.get("loc", ())) or "input"
            issues.append(f"{location}: {error.get('msg', 'invalid')}")
        raise InputError(f"Invalid input for operation {definition.id}: {'; '.join(issues)}") from None


__all__ = ["operation_info", "validate_input", "workspace_fields"]
