"""Run one `rig` command line inside the test process, through the entry function the console script calls.

A subprocess costs an interpreter start and the import of Typer, Rich, pydantic and the engine on
every call; in-process that is paid once per test worker. What a real process gets for free is
rebuilt here and undone afterwards, so a run leaves nothing behind for the next test:

- file descriptors 0, 1 and 2 point at temporary files for the call, so output that bypasses
  ``sys.stdout`` (a child process a handler starts, a ``dup2``) is captured too, and nothing is a
  terminal, exactly as with ``subprocess.run(..., capture_output=True)``;
- ``sys.stdin``/``sys.stdout``/``sys.stderr`` are fresh text streams over those descriptors,
  buffered the way CPython buffers a non-terminal stdout and stderr;
- the working directory, ``os.environ`` (a project's ``.env`` is loaded into it), ``sys.argv``,
  ``sys.path``, the import machinery, logging, signal handlers, warning filters and Rich's global
  console are restored; modules imported from outside the installed packages and this repository
  (a project's ``rig_config`` and its helpers) are dropped, so one test's project code is never
  served to another's;
- ``os._exit`` raises ``InProcessExit`` instead of ending the test worker: a command that leaves
  that way (the interrupt paths) must be tested as a real process.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import site
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, NamedTuple, NoReturn, TextIO

import providers
import rigcli

REPO_ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter's warning filters (no -W, no dev mode): what `rig` itself would run with.
_DEFAULT_WARNING_FILTERS: tuple[tuple[str, type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE") if hasattr(signal, name))


class Captured(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


class InProcessExit(BaseException):
    """rig called ``os._exit``; a BaseException so nothing in rig mistakes it for a command error."""

    def __init__(self, code: int) -> None:
        super().__init__(
            f"rig called os._exit({code}) while running in-process; run this command as a subprocess "
            "(subprocess=True): only a real process can end that way"
        )
        self.code = code


def run_in_process(args: Sequence[str], *, cwd: Path, environ: Mapping[str, str], input: str = "") -> Captured:
    """``rig ARGS`` in ``cwd``, with exactly ``environ`` as the environment and ``input`` on stdin."""
    from rigcli.__main__ import main

    with contextlib.ExitStack() as stack:
        stack.enter_context(_working_directory(cwd))
        stack.enter_context(_environment(environ))
        stack.enter_context(_interpreter_state(["rig", *args]))
        stack.enter_context(_no_os_exit())
        streams = stack.enter_context(_standard_streams(input))
        code = _call(main, list(args))
    return Captured(code, streams.stdout, streams.stderr)


def _call(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """What the console script's ``sys.exit(main())`` and the interpreter make of how ``main`` ends."""
    result: str | int | None
    try:
        result = main(argv)
    except SystemExit as exc:
        result = exc.code
    except Exception:
        traceback.print_exc()  # an uncaught exception: traceback on stderr, exit status 1
        return 1
    finally:
        _flush()
    if result is None:
        return 0
    if isinstance(result, int):
        return result
    sys.stderr.write(f"{result}\n")
    sys.stderr.flush()
    return 1


# -- process-wide state ------------------------------------------------------------------------


@contextlib.contextmanager
def _working_directory(cwd: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _environment(environ: Mapping[str, str]) -> Iterator[None]:
    """Restored afterwards, whatever the command changed (a project's ``.env`` is loaded into it)."""
    before = dict(os.environ)
    _set_environ(environ)
    try:
        yield
    finally:
        _set_environ(before)


def _set_environ(wanted: Mapping[str, str]) -> None:
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    for name, value in wanted.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


@contextlib.contextmanager
def _interpreter_state(argv: list[str]) -> Iterator[None]:
    saved_argv = sys.argv[:]
    saved_path, saved_meta_path, saved_hooks = sys.path[:], sys.meta_path[:], sys.path_hooks[:]
    saved_importer_cache = set(sys.path_importer_cache)
    saved_modules = dict(sys.modules)
    sys.argv = argv
    try:
        with _logging_state(), _signal_handlers(), _fresh_warnings():
            yield
    finally:
        sys.argv = saved_argv
        sys.path[:], sys.meta_path[:], sys.path_hooks[:] = saved_path, saved_meta_path, saved_hooks
        for key in set(sys.path_importer_cache) - saved_importer_cache:
            del sys.path_importer_cache[key]
        _restore_modules(saved_modules)
        _reset_rich()


def _restore_modules(saved: dict[str, ModuleType]) -> None:
    """Keep what rig imported lazily from installed code and this repository; drop project modules."""
    for name, module in list(sys.modules.items()):
        if name in saved:
            if module is not saved[name]:
                sys.modules[name] = saved[name]
        elif name == "rig_config" or not _is_shared_code(module):
            del sys.modules[name]
    for name, module in saved.items():
        sys.modules.setdefault(name, module)


def _shared_roots() -> tuple[str, ...]:
    roots = {
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        *site.getsitepackages(),
        site.getusersitepackages(),
    }
    roots |= {str(Path(package.__file__ or "").resolve().parent) for package in (rigcli, providers)}
    roots.add(str(REPO_ROOT / "tests"))
    return tuple(os.path.realpath(root) + os.sep for root in roots if root)


_SHARED_ROOTS = _shared_roots()


def _is_shared_code(module: ModuleType | None) -> bool:
    locations = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or [])]
    files = [location for location in locations if isinstance(location, str) and os.path.isabs(location)]
    return all(os.path.realpath(file).startswith(_SHARED_ROOTS) for file in files)


@contextlib.contextmanager
def _logging_state() -> Iterator[None]:
    """rig's handler-output capture adds a handler to the root logger and one logger per node."""
    manager = logging.Logger.manager
    root = logging.getLogger()
    saved = {
        name: (logger.handlers[:], logger.level, logger.propagate, logger.disabled)
        for name, logger in manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    saved_root = (root.handlers[:], root.level)
    saved_disable = manager.disable
    try:
        yield
    finally:
        root.handlers[:], root.level = saved_root[0], saved_root[1]
        logging.disable(saved_disable)
        for name, logger in list(manager.loggerDict.items()):
            if not isinstance(logger, logging.Logger):
                continue
            if name in saved:
                logger.handlers[:], logger.level, logger.propagate, logger.disabled = saved[name]
            elif name == "rig" or name.startswith("rig."):
                logger.handlers.clear()


@contextlib.contextmanager
def _signal_handlers() -> Iterator[None]:
    """asyncio's loop.close() resets the handlers rig's session installed to the defaults."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    wakeup_fd = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup_fd)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            if handler is not None:
                signal.signal(signum, handler)
        signal.set_wakeup_fd(wakeup_fd)


@contextlib.contextmanager
def _fresh_warnings() -> Iterator[None]:
    """Warnings as a fresh `rig` process shows them: default filters, printed on (captured) stderr."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_DEFAULT_WARNING_FILTERS):
            warnings.filterwarnings(action, category=category, module=module or "")  # type: ignore[arg-type]
        warnings.showwarning = _show_warning
        yield


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _reset_rich() -> None:
    """Rich keeps one global console (``rich.get_console()``) bound to the stream it first saw."""
    rich = sys.modules.get("rich")
    if rich is not None and hasattr(rich, "_console"):
        setattr(rich, "_console", None)  # noqa: B010 - a private name mypy does not know


@contextlib.contextmanager
def _no_os_exit() -> Iterator[None]:
    real_exit = os._exit

    def refuse(status: int) -> NoReturn:
        raise InProcessExit(status)

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = real_exit


# -- standard streams --------------------------------------------------------------------------


class _Output:
    """What ended up in fds 1 and 2; read once the streams are restored."""

    stdout = ""
    stderr = ""


@contextlib.contextmanager
def _standard_streams(input: str) -> Iterator[_Output]:
    output = _Output()
    _flush()  # whatever the test itself printed stays out of the capture
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    with tempfile.TemporaryFile() as stdin_file, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin_file.write(input.encode("utf-8"))
        stdin_file.flush()
        stdin_file.seek(0)
        with _redirected_fds({0: stdin_file, 1: out, 2: err}):
            sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
            sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
            sys.stderr = io.TextIOWrapper(
                io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                encoding="utf-8",
                errors="backslashreplace",
                line_buffering=True,
            )
            try:
                yield output
            finally:
                _flush()
                sys.stdin, sys.stdout, sys.stderr = saved_streams
        output.stdout = _decoded(out)
        output.stderr = _decoded(err)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()


@contextlib.contextmanager
def _redirected_fds(targets: Mapping[int, IO[bytes]]) -> Iterator[None]:
    saved: dict[int, int | None] = {}
    for fd in targets:
        try:
            saved[fd] = os.dup(fd)
        except OSError:
            saved[fd] = None  # closed in this process: closed again afterwards
    try:
        for fd, file in targets.items():
            os.dup2(file.fileno(), fd)
        yield
    finally:
        for fd, copy in saved.items():
            if copy is None:
                with contextlib.suppress(OSError):
                    os.close(fd)
            else:
                os.dup2(copy, fd)
                os.close(copy)


def _decoded(file: IO[bytes]) -> str:
    """Decoded the way ``subprocess.run(..., text=True)`` decodes (universal newlines)."""
    file.seek(0)
    return file.read().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


__all__ = ["Captured", "InProcessExit", "run_in_process"]
