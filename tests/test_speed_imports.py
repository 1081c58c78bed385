"""The speed room's import techniques: parameters read without inspect, and imports deferred to first use."""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from rigcli.speed.parameters import plain_parameters


def _everything(a, b=1, /, c=2, *rest, d, e=3, **extra):  # type: ignore[no-untyped-def]
    return None


def _keyword_only_after_star(*, step, log=None):  # type: ignore[no-untyped-def]
    return None


def _closure() -> Callable[..., object]:
    seen = 1

    def inner(step, providers=seen):  # type: ignore[no-untyped-def]
        return step

    return inner


PLAIN: list[Callable[..., object]] = [
    _everything,
    _keyword_only_after_star,
    _closure(),
    lambda: None,
    lambda step, *args: None,
    lambda **kwargs: None,
    lambda a, /, b: None,
]


def _by_inspect(fn: Callable[..., object]) -> tuple[tuple[str, int, bool], ...]:
    return tuple((p.name, int(p.kind), p.default is not p.empty) for p in inspect.signature(fn).parameters.values())


@pytest.mark.parametrize("fn", PLAIN)
def test_a_plain_functions_parameters_are_what_inspect_says(fn: Callable[..., object]) -> None:
    assert plain_parameters(fn) == _by_inspect(fn)


def _wrapped(fn: Callable[..., object]) -> Callable[..., object]:
    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        return fn(*args, **kwargs)

    return wrapper


class _Callable:
    def __call__(self, step: object) -> None:
        return None

    def method(self, step: object) -> None:
        return None


@pytest.mark.parametrize(
    "fn",
    [_wrapped(_everything), functools.partial(_everything, 1), _Callable(), _Callable().method, len, _Callable],
)
def test_anything_but_a_plain_function_is_left_to_inspect(fn: object) -> None:
    assert plain_parameters(fn) is None


def _run_bare(script: str, *, installed: bool = False) -> subprocess.CompletedProcess[str]:
    # -S: no site, so no editable install's import hook (it imports pathlib and urllib.parse);
    # rig's own directory on PYTHONPATH stands in for it, and the venv's packages when ``installed``.
    path = [str(Path(__file__).resolve().parents[1])]
    if installed:
        path += sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, check=False, env=env)


_DEFERRED = """
import sys
from rigcli.speed.imports import import_deferring

dataclasses = import_deferring("dataclasses", {"inspect": (), "copy": ()})
assert "inspect" not in sys.modules and "copy" not in sys.modules, "deferred, and not left standing in"

@dataclasses.dataclass
class Documented:
    '''Has its own docstring, so making it needs no inspect.'''
    items: list

record = Documented([1])
assert "inspect" not in sys.modules

@dataclasses.dataclass
class Undocumented:
    items: list

assert Undocumented.__doc__ == "Undocumented(items: list)", Undocumented.__doc__
copied = dataclasses.asdict(Documented([[1]]))
assert copied == {"items": [[1]]}
import copy, inspect
assert callable(inspect.signature) and callable(copy.deepcopy)
assert type(inspect).__name__ == "module" and sys.modules["inspect"] is inspect
print("ok")
"""


def test_a_deferred_import_loads_on_first_use_and_is_the_real_module_after() -> None:
    done = _run_bare(_DEFERRED)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


_PATHS = """
import sys
from rigcli.speed.deferred import RARELY_USED
from rigcli.speed.imports import import_deferring

pathlib = import_deferring("pathlib", RARELY_USED["pathlib"])
assert not {"urllib.parse", "ipaddress", "ntpath"} & set(sys.modules), "deferred, and not left standing in"
assert str(pathlib.Path("/tmp") / "a b") == "/tmp/a b"
assert "urllib.parse" not in sys.modules
assert pathlib.Path("/tmp/a b").as_uri() == "file:///tmp/a%20b"  # the function taken by name, called late
assert pathlib.PureWindowsPath("C:/x/y").as_posix() == "C:/x/y" and pathlib.PureWindowsPath("C:/x").drive == "C:"
import urllib.parse
assert urllib.parse.urlsplit("http://h/p").netloc == "h" and sys.modules["urllib.parse"] is urllib.parse
print("ok")
"""


def test_a_function_taken_by_name_imports_its_module_when_first_called() -> None:
    done = _run_bare(_PATHS)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_signals_are_the_signal_modules_numbers_and_functions() -> None:
    import signal

    from rigcli.speed import signals

    assert (signals.SIGINT, signals.SIGTERM, signals.SIGHUP) == (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    assert signals.signal_name(int(signal.SIGTERM)) == "SIGTERM"
    previous = signals.signal(signals.SIGHUP, signals.SIG_IGN)
    try:
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signals.signal(signals.SIGHUP, previous)  # what it gave back is accepted back
    assert signal.getsignal(signal.SIGHUP) == previous


_DRIVER = """
import sys
from rigcli.state.postgres.connection import import_psycopg

psycopg = import_psycopg("postgresql://example/db")
left_out = {"importlib.metadata", "email", "zipfile", "ctypes", "ctypes.util", "asyncio", "ssl"} & set(sys.modules)
assert not left_out, left_out
assert not [name for name, module in sys.modules.items() if type(module).__name__ == "_ImportedOnFirstUse"]
import psycopg_binary
import psycopg.pq.misc as misc

assert "libc" in misc.ctypes.util.find_library("c")  # psycopg's own reference, imported when used
import ctypes.util
import importlib.metadata

assert sys.modules["ctypes.util"] is ctypes.util and type(importlib.metadata).__name__ == "module"
assert sys.modules["importlib.metadata"] is importlib.metadata and importlib.metadata.version("psycopg")
assert (psycopg.__version__, psycopg_binary.__version__) == (
    importlib.metadata.version("psycopg"), importlib.metadata.version("psycopg-binary")
), psycopg.__version__
try:
    psycopg.connect("host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2")
except psycopg.OperationalError as error:
    assert isinstance(error, psycopg.Error) and type(error).__module__ == "psycopg"
assert not {"asyncio.base_events", "ssl"} & set(sys.modules), "connecting needs neither"

import asyncio  # user code (an async handler) gets the real package, with what psycopg took from it
import ssl

assert type(asyncio).__name__ == "module" and sys.modules["asyncio"] is asyncio and asyncio.__loader__
assert asyncio.CancelledError is psycopg.errors.CancelledError
assert asyncio.CancelledError in psycopg.connection_async._INTERRUPTED
assert asyncio.tasks is sys.modules["asyncio.tasks"] and asyncio.events.get_running_loop is asyncio.get_running_loop
assert issubclass(psycopg._acompat.AQueue, asyncio.Queue) and ssl.create_default_context()
assert not [finder for finder in sys.meta_path if type(finder).__module__ == "rigcli.speed.imports"]


async def refused() -> str:
    try:
        await psycopg.AsyncConnection.connect("host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2")
    except psycopg.OperationalError:
        return "refused"
    return "connected?"


async def cancelled() -> str:
    task = asyncio.create_task(asyncio.sleep(10))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except psycopg.errors.CancelledError:
        return "cancelled"
    return "not cancelled?"


assert asyncio.run(refused()) == "refused" and asyncio.run(cancelled()) == "cancelled"
print("ok")
"""


_READ_WHOLE = """
import sys
from rigcli.speed.imports import import_deferring

sys.path.insert(0, sys.argv[1])
uses = import_deferring("uses_asyncio", {"asyncio": ()})
asyncio = sys.modules["asyncio"]  # read a name it has no part for: the whole package, at once
assert type(asyncio).__name__ == "module" and uses.gather is asyncio.gather
assert uses.CancelledError is asyncio.CancelledError is asyncio.exceptions.CancelledError
assert asyncio.exceptions is sys.modules["asyncio.exceptions"] and asyncio.base_events.BaseEventLoop
print("ok")
"""


def test_a_package_read_for_a_name_it_has_no_part_for_is_imported_whole_with_its_parts(tmp_path: Path) -> None:
    (tmp_path / "uses_asyncio.py").write_text("from asyncio import CancelledError, gather\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-S", "-c", _READ_WHOLE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_the_driver_is_imported_without_what_a_sync_client_never_uses_which_still_works_after() -> None:
    pytest.importorskip("psycopg")
    done = _run_bare(_DRIVER, installed=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


@pytest.mark.parametrize("distribution", ["psycopg", "psycopg-binary", "psycopg_binary", "pytest", "Typer", "rig"])
def test_an_installed_version_is_what_importlib_metadata_says(distribution: str) -> None:
    import importlib.metadata

    from rigcli.speed.distributions import installed_version

    assert installed_version(distribution) == importlib.metadata.version(distribution)


def test_a_version_it_cannot_read_off_a_directory_name_is_asked_of_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    from rigcli.speed.distributions import installed_version

    egg = tmp_path / "Old_Thing.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: old-thing\nVersion: 1.2.post3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_version("old-thing") == importlib.metadata.version("old-thing") == "1.2.post3"
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version("no-such-distribution-anywhere")
