"""Host capabilities: what a project or plugin lets providers ask the host for, by id (rigkit's
``requestCapability``): ``define_host_capability(id, handle)``, then a provider's
``request_capability(id, params)`` calls ``handle(params)`` and returns what it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rigcli.errors import RigError

CapabilityHandle = Callable[[Mapping[str, object]], object]

# One registry per process: rig_config.py (imported once per load) and plugins define into it.
_HANDLES: dict[str, CapabilityHandle] = {}


def define_host_capability(capability_id: str, handle: CapabilityHandle) -> None:
    """Answer ``request_capability(capability_id, params)`` with ``handle(params)``; defining an id
    again replaces its handle (a reloaded config defines its capabilities again)."""
    if not isinstance(capability_id, str) or not capability_id.strip():
        raise RigError("Host capability id must be a non-empty string")
    if not callable(handle):
        raise RigError(f'Host capability "{capability_id}" needs a callable handle')
    _HANDLES[capability_id] = handle


def request_capability(capability_id: str, params: Mapping[str, object] | None = None) -> object:
    """What the handle of ``capability_id`` returns for ``params`` (an awaitable, if it is async)."""
    handle = _HANDLES.get(capability_id)
    if handle is None:
        raise RigError(f'Host capability "{capability_id}" is not registered')
    return handle(dict(params or {}))


def host_capabilities() -> list[str]:
    """The ids defined so far, sorted."""
    return sorted(_HANDLES)


__all__ = ["CapabilityHandle", "define_host_capability", "host_capabilities", "request_capability"]
