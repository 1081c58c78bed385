"""The one user-facing error base (RigError) and its kinds, each with its exit code."""

from __future__ import annotations

import os

from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: this module is on `rig logs TASK` answered from the cache, which imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from traceback import FrameSummary

if TYPE_CHECKING:
    import traceback
else:
    traceback = lazy_module("traceback")


class RigError(Exception):
    """An error the user can act on: printed as one line, never with a traceback."""

    exit_code = 1


class ConfigError(RigError):
    """rig_config.py cannot be found, imported or understood."""


class TaskError(RigError):
    """A task, hook or operation failed, or returned something rig cannot keep.

    ``project_dir``: set when project code raised (the exception is the ``__cause__``), so that
    ``RIG_DEBUG=1`` can show the frames in the project first (``format_project_first``).
    """

    def __init__(self, message: str = "", *, project_dir: str | None = None) -> None:
        super().__init__(message)
        self.project_dir = project_dir


class InputError(RigError):
    """Operation input or a workspace name did not validate."""


class NotFoundError(RigError):
    """An unknown workflow, workspace, operation or cache task was named."""


class UnknownWorkspaceError(NotFoundError):
    """No workspace of that name exists (``rm --missing-ok`` treats it as done)."""


class ProviderError(RigError):
    """A provider could not be set up or refused an action."""


class UnsupportedError(ProviderError):
    """The workspace's provider cannot do that at all (the local provider has nothing to stop)."""


class UnreachableError(ProviderError):
    """A provider could not be asked at all (its daemon does not answer, or is not the daemon that
    made the thing): the answer is unknown, never "gone". ``rig gc --forget-unreachable`` may forget it."""


class UnconfirmedArtifactError(UnreachableError):
    """Whether an artifact is still there cannot be asked now (the registry that keeps it does not
    answer): not "gone", so the run that made it stays cached, and the plan warns with this message."""


class DeletionRefusedError(ProviderError):
    """Where a resource is kept refuses deletions by its own configuration (a registry without
    deletes): nothing was removed there, and asking again changes nothing until that changes."""


class StateError(RigError):
    """The state database is unusable (for example written by a newer rig)."""


class DamagedStateError(StateError):
    """The state database is damaged (SQLite says malformed): rig reads what it can, writes nothing."""

    def __init__(self, path: str, reason: str) -> None:
        reason = " ".join(reason.split())[:300]  # one line, whatever SQLite or a cell said
        super().__init__(
            f"State database {path} is damaged ({reason}); rig will not write to it. "
            "See `rig state check`, and `rig state recover` to salvage it into a new file"
        )
        self.path = path
        self.reason = reason


class Declined(RigError):
    """The user answered no to a confirmation: the message says what was kept (shown without "error:")."""


class UsageError(RigError):
    """The command line itself is wrong (exit 2)."""

    exit_code = 2


class AmbiguousWorkspaceError(UsageError):
    """A workspace name exists in several workflows and none was chosen; ``workflows`` lists them."""

    def __init__(self, name: str, workflows: list[str]) -> None:
        super().__init__(f'Workspace "{name}" exists in multiple workflows: {", ".join(workflows)}. Pass --workflow.')
        self.name = name
        self.workflows = workflows


class AmbiguousWorkflowError(UsageError):
    """Several workflows are defined and none was named; ``workflows`` lists them.

    The engine raises it before it reads or writes anything, so a caller may ask which one is
    meant and call again with that name.
    """

    def __init__(self, workflows: list[str]) -> None:
        super().__init__(f"Multiple workflows are defined; pass --workflow (available: {', '.join(workflows)})")
        self.workflows = workflows


class StateLockedError(RigError):
    """Another rig process holds the state lock and we were told not to wait (exit 4)."""

    exit_code = 4


class PendingWorkError(RigError):
    """``apply --expect-cached`` found pending tasks and ran nothing (exit 5).

    ``document``: what ``--json`` prints for it (``{workflow, pending, plan}``).
    """

    exit_code = 5

    def __init__(self, message: str, document: dict[str, object]) -> None:
        super().__init__(message)
        self.document = document


class InterruptedRunError(RigError):
    """The run was interrupted by SIGINT/SIGTERM (exit 130)."""

    exit_code = 130


class HandlerBaseException(Exception):
    """A ``BaseException`` project code raised (``GeneratorExit``, a subclass of its own): its
    handler failed, like with any other exception; rig's own interrupts are not wrapped."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(describe_exception(original))
        self.original = original


def _split_frames(exc: BaseException, project_dir: str) -> tuple[list[FrameSummary], list[FrameSummary]]:
    """The frames of ``exc``'s traceback in the project's own files, and all the others (rig's,
    the standard library's, installed packages', a virtualenv inside the project too)."""

    root = os.path.realpath(project_dir) + os.sep
    rig = os.path.dirname(os.path.realpath(__file__)) + os.sep
    shown = exc.original if isinstance(exc, HandlerBaseException) else exc
    mine: list[FrameSummary] = []
    others: list[FrameSummary] = []
    for frame in traceback.extract_tb(shown.__traceback__):
        path = os.path.realpath(frame.filename)
        ours = path.startswith(root) and not path.startswith(rig) and f"{os.sep}site-packages{os.sep}" not in path
        (mine if ours else others).append(frame)
    return mine, others


def where_in_project(exc: BaseException, project_dir: str) -> str | None:
    """``tools.py:12 in install_pkgs``: the innermost frame of ``exc`` in the project's files
    (relative to the project), or None when the project's code is nowhere in it."""
    mine, _ = _split_frames(exc, project_dir)
    if not mine:
        return None
    frame = mine[-1]
    file = os.path.relpath(os.path.realpath(frame.filename), os.path.realpath(project_dir))
    return f"{file}:{frame.lineno} in {frame.name}"


def format_project_first(exc: BaseException, project_dir: str) -> str:
    """``exc``'s traceback with the project's frames first, then the exception, then rig's frames."""

    mine, others = _split_frames(exc, project_dir)
    shown = exc.original if isinstance(exc, HandlerBaseException) else exc
    lines = ["Traceback, your code first (most recent call last):\n"]
    lines += traceback.StackSummary.from_list(mine).format()
    lines += traceback.format_exception_only(type(shown), shown)
    if others:
        lines.append("Then rig's frames and the libraries' (most recent call last):\n")
        lines += traceback.StackSummary.from_list(others).format()
    return "".join(lines)


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` for an exception from project code, even one whose ``str()`` raises."""
    shown = exc.original if isinstance(exc, HandlerBaseException) else exc
    try:
        text = str(shown)
    except Exception:
        text = "(its message could not be read)"
    name = type(shown).__name__
    return f"{name}: {text}" if text else name


__all__ = [
    "AmbiguousWorkflowError",
    "AmbiguousWorkspaceError",
    "ConfigError",
    "DamagedStateError",
    "Declined",
    "DeletionRefusedError",
    "HandlerBaseException",
    "InputError",
    "InterruptedRunError",
    "NotFoundError",
    "PendingWorkError",
    "ProviderError",
    "RigError",
    "StateError",
    "StateLockedError",
    "TaskError",
    "UnconfirmedArtifactError",
    "UnknownWorkspaceError",
    "UnreachableError",
    "UsageError",
    "describe_exception",
    "format_project_first",
    "where_in_project",
]
