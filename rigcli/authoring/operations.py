"""Operations and workspace hooks as declared in the DSL, with their id rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeGuard

from rigcli.authoring.values import ProviderDefinition
from rigcli.errors import ConfigError
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from pydantic import BaseModel  # type-only: loading a project must not import pydantic

Handler = Callable[..., object]
"""A task handler, workspace hook or operation: a plain or ``async`` function, called by parameter name."""
ProviderScope = Mapping[str, ProviderDefinition | None]  # None: removed from scope

RESERVED_OPERATION_IDS = frozenset(
    [
        "apply",
        "cache",
        "completion",
        "create",
        "doctor",
        "fork",
        "help",
        "init",
        "ls",
        "op",
        "plan",
        "projects",
        "providers",
        "remove",
        "rm",
        "run",
        "version",
    ]
)


@lazy_dataclass(frozen=True, eq=False)
class WorkspaceDefinition:
    """A workflow's workspace hooks (``create``, optional ``remove``) and their provider scope."""

    create: Handler
    remove: Handler | None
    scope: ProviderScope
    ttl: float | None = None  # seconds from its fork until the reaper removes it; None: never
    idle_stop: float | None = None  # seconds unused until the reaper stops it; None: never
    on_start: Handler | None = None  # after `rig start` started its machines
    on_attach: Handler | None = None  # before each `rig shell` (or `rig ssh`) session
    ports: tuple[Mapping[str, object], ...] = ()  # what it serves (authoring/ports.py)


@lazy_dataclass(frozen=True, eq=False)
class OperationDefinition:
    """An operation as declared: its id, handler, input model and where it runs."""

    id: str
    run: Handler
    input: type[BaseModel] | None
    title: str | None
    description: str | None
    scope: ProviderScope
    workspace: bool  # True: runs against one workspace (``rig op WS OP``)


def check_operation_id(op_id: object, *, workspace: bool, existing: tuple[OperationDefinition, ...]) -> str:
    label = "Workspace operation" if workspace else "Operation"
    if not isinstance(op_id, str) or not op_id.strip():
        raise ConfigError(f"{label} ids must be non-empty")
    op_id = op_id.strip()
    if workspace and "/" in op_id:
        raise ConfigError(f'{label} ids cannot contain "/" ({op_id})')
    if op_id in RESERVED_OPERATION_IDS:
        raise ConfigError(
            f"{label} id {op_id} is reserved by rig (reserved: {', '.join(sorted(RESERVED_OPERATION_IDS))})"
        )
    if any(item.id == op_id for item in existing):
        raise ConfigError(f"{label} id {op_id} is already defined")
    return op_id


def is_model_class(value: object) -> TypeGuard[type[BaseModel]]:
    """A pydantic model class, recognised without importing pydantic (a project that uses one has)."""
    return isinstance(value, type) and hasattr(value, "model_validate")  # inspect.isclass, without inspect


def make_operation(
    op_id: str,
    run: object,
    input_model: object,
    title: str | None,
    description: str | None,
    scope: ProviderScope,
    *,
    workspace: bool,
) -> OperationDefinition:
    if not callable(run):
        raise ConfigError(f"Operation {op_id} needs run=<function>")
    if input_model is not None and not is_model_class(input_model):
        raise ConfigError(f"Operation {op_id} input= must be a pydantic model class")
    return OperationDefinition(op_id, run, input_model, title, description, scope, workspace)


__all__ = [
    "RESERVED_OPERATION_IDS",
    "Handler",
    "OperationDefinition",
    "ProviderScope",
    "WorkspaceDefinition",
    "check_operation_id",
    "is_model_class",
    "make_operation",
]
