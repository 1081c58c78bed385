"""The one place errors become exit codes: RigError -> its code, ^C -> 130, anything else -> 3 + log."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from rigcli._version import __version__
from rigcli.cli import signalled
from rigcli.errors import Declined, RigError, TaskError, describe_exception, format_project_first
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state.paths import logs_dir

# Not typing.TYPE_CHECKING: every command line imports this module before its body runs, and
# pathlib (with urllib.parse) and the masker are only needed once there is an error to show.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextlib
    import platform
    import traceback
    from pathlib import Path

    from rigcli import masking, sanitize
else:
    contextlib = lazy_module("contextlib")
    platform = lazy_module("platform")
    traceback = lazy_module("traceback")
    # Only a command that fails shows an error: masking and sanitizing are imported then.
    masking = lazy_module("rigcli.masking")
    sanitize = lazy_module("rigcli.sanitize")


INTERNAL_ERROR = 3
INTERRUPTED = 130
INTERRUPTED_CODES = frozenset({129, 130, 143})  # SIGHUP, SIGINT, SIGTERM
last_error: str | None = None  # the last message print_error showed (--json-stream's summary says it)


def debug_enabled() -> bool:
    return os.environ.get("RIG_DEBUG") == "1"


def shown(text: str) -> str:
    """An error's text as it may reach the user: secrets masked, control sequences removed."""
    return sanitize.sanitize(masking.mask_text(text))


def print_error(message: str) -> None:
    """One line on stderr; a multi-line message keeps its extra lines indented under it.

    The one way errors reach the user, so secrets are masked here, and control sequences are
    removed: messages quote names and text from the project and from the command line.
    """
    global last_error
    last_error = shown(str(message)).strip()
    first, *more = last_error.splitlines() or [""]
    lines = [f"error: {first}", *(f"  {line}" for line in more)]
    # stderr may be gone (a closed pipe, a terminal that hung up): the exit code still tells.
    try:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _print_traceback(exc: BaseException) -> None:
    """RIG_DEBUG=1: the traceback on stderr, secrets masked like every other error."""
    cause = exc.__cause__
    if isinstance(exc, TaskError) and exc.project_dir and cause is not None:
        # Project code failed: its own frames first, where the mistake most likely is.
        sys.stderr.write(masking.mask_text(format_project_first(cause, exc.project_dir)))
        return
    sys.stderr.write(masking.mask_text("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))


def run_guarded(body: Callable[[], int], *, argv: list[str] | None = None, error_code: int | None = None) -> int:
    """Run a command body and map whatever it raises to an exit code with one line on stderr.

    Once a signal came (``signalled.py``), the command was interrupted whatever the body raised or
    returned: the signal may have surfaced as another error on its way out. ``error_code``: the code
    of every error, whatever it was (``plan --detailed-exitcode``: 1, so that 2 always means
    "pending"); what the body returns, and an interrupt's code, are kept.
    """
    if error_code is not None:
        returned: list[int] = []

        def noting() -> int:
            returned.append(body())
            return returned[0]

        code = run_guarded(noting, argv=argv)
        return code if returned else error_exit(code, error_code)
    try:
        code = body()
    except BaseException as exc:
        late = signalled.exit_code(0)
        return interrupted(late) if late is not None else _exit_code(exc, argv)
    late = signalled.exit_code(code)
    return code if late is None else interrupted(late)


def interrupted(code: int) -> int:
    """The one line of an interrupted command, and its exit code (128 + the signal)."""
    print_error("interrupted")
    return code


def _exit_code(exc: BaseException, argv: list[str] | None) -> int:
    """The exit code of what a command body raised, with its one line on stderr."""
    global last_error
    if isinstance(exc, Declined):
        # The user said no: not an error, but the command did not do what it was asked to.
        last_error = shown(str(exc))
        sys.stderr.write(last_error + "\n")
        sys.stderr.flush()
        return exc.exit_code
    if isinstance(exc, RigError):
        if debug_enabled():
            _print_traceback(exc)
        print_error(str(exc))
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return interrupted(INTERRUPTED)
    if isinstance(exc, SystemExit):
        # Command bodies return their code, so this came from project code calling sys.exit().
        if debug_enabled():
            _print_traceback(exc)
        print_error(f"project code called sys.exit({exc.code!r}) (rig_config.py or a handler)")
        return 1
    if isinstance(exc, BrokenPipeError):
        # `rig ... | head` closed our stdout: not an error worth a log file.
        _silence_stdout()
        return 1
    if isinstance(exc, Exception):
        return report_internal_error(exc, argv=argv)
    raise exc  # GeneratorExit and the like: not ours to map


def error_exit(code: int, error_code: int | None) -> int:
    """``code``, or ``error_code`` when there is one and ``code`` is an error's (not an interrupt's)."""
    return error_code if error_code is not None and code != 0 and code not in INTERRUPTED_CODES else code


def report_internal_error(exc: BaseException, *, argv: list[str] | None = None) -> int:
    if debug_enabled():
        _print_traceback(exc)
    summary = (describe_exception(exc).strip().splitlines() or [type(exc).__name__])[0]
    log_path = _write_crash_log(exc, argv)
    where = f" (traceback in {log_path})" if log_path else ""
    print_error(f"unexpected internal error: {summary}{where}")
    return INTERNAL_ERROR


def _write_crash_log(exc: BaseException, argv: list[str] | None) -> Path | None:
    """Write the traceback and versions as a Markdown file ready to attach to a bug report."""
    try:
        directory = logs_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = directory / f"rig-{stamp}-{os.getpid()}.log"
        body = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        report = (
            "# rig crash report\n\n"
            f"- rig: {__version__}\n"
            f"- python: {sys.version.split()[0]} ({sys.executable})\n"
            f"- platform: {_platform()}\n"
            f"- command: rig {' '.join(argv if argv is not None else sys.argv[1:])}\n"
            f"- cwd: {os.getcwd()}\n\n"
            f"```\n{body}```\n"
        )
        # Tracebacks quote exception messages and locals' reprs: a secret must not reach the file.
        path.write_text(masking.mask_text(report), encoding="utf-8")
        return path
    except Exception:
        return None  # the one-line message still goes out; a broken log dir must not mask the error


def finish(code: int) -> int:
    """The exit code a command line ends with; after an interrupt, leave at once.

    A handler still sleeping in a worker thread cannot be stopped, and the interpreter would
    otherwise wait for it at exit. Child processes are already gone (their process groups were
    killed) and the run journal is already written.
    """
    if code in INTERRUPTED_CODES:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe must not stop us leaving
                stream.flush()
        os._exit(code)
    return code


def _platform() -> str:

    return platform.platform()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


__all__ = [
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "INTERRUPTED_CODES",
    "debug_enabled",
    "error_exit",
    "finish",
    "interrupted",
    "print_error",
    "report_internal_error",
    "run_guarded",
]
