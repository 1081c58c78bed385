"""Operation input helpers: ``Arg(position=…)`` for positional CLI arguments and ``WorkspaceRef``.

Operation inputs are pydantic models. A field typed ``WorkspaceRef`` is given a workspace
name on the command line; the engine resolves it to the stored workspace (``.name``,
``.ctx``) before the model validates.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

POSITION_KEY = "x-rig-position"
WORKSPACE_KEY = "x-rig-workspace"


class WorkspaceRef(BaseModel):
    """A stored workspace, as an operation input: ``.name`` and its ``.ctx``."""

    model_config = ConfigDict(frozen=True, json_schema_extra={WORKSPACE_KEY: True})

    name: str
    ctx: dict[str, object] = Field(default_factory=dict)  # the workspace's stored JSON context


def Arg(default: object = ..., *, position: int, description: str | None = None, **field_options: Any) -> Any:
    """A pydantic field that the CLI takes as the ``position``-th positional argument.

    Typed like ``pydantic.Field``: the options are Field's own, and the result is ``Any`` so that
    ``name: str = Arg(position=0)`` type-checks.
    """
    extra = dict(field_options.pop("json_schema_extra", None) or {})
    extra[POSITION_KEY] = position
    return Field(default, description=description, json_schema_extra=extra, **field_options)


__all__ = ["POSITION_KEY", "WORKSPACE_KEY", "Arg", "WorkspaceRef"]
