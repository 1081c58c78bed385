"""Call handlers: inject parameters by name, run sync code in threads, capture its console."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from rigcli.errors import HandlerBaseException, TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.speed.awaitables import isawaitable, iscoroutinefunction
from rigcli.speed.coroutines import Blocking, loop_running, need_event_loop
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.parameters import KEYWORD_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD, plain_parameters
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from rigcli.engine.capture import NodeConsole

if TYPE_CHECKING:
    import asyncio
    import inspect
else:
    asyncio = lazy_module("asyncio")
    inspect = lazy_module("inspect")


T = TypeVar("T")
Handler = Callable[..., object]
RuntimeFactory = Callable[[], Awaitable[object]]


def freeze(value: object) -> object:
    """A read-only view of a JSON value: mappings become MappingProxyType, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


@lazy_dataclass(frozen=True)
class Invalidate:
    """Returned by ``step.invalidate(target)``: re-run ``target`` and everything built on it."""

    target: str


class Step:
    """The ``step`` parameter: the incoming context and where in the workflow we are."""

    def __init__(self, *, ctx: JsonValue, path: str, workflow: str) -> None:
        self.ctx = freeze(ctx if ctx is not None else {})
        self.path = path
        self.workflow = workflow
        self.recorded: dict[str, JsonValue] = {}  # what step.metadata(...) gave, stored with the run

    def invalidate(self, target: str) -> Invalidate:
        if not isinstance(target, str) or not target:
            raise TaskError(f"Task {self.path}: step.invalidate needs a task name or path")
        return Invalidate(target)

    def metadata(self, values: Mapping[str, object]) -> None:
        """Merge ``values`` (a JSON object) into this run's record: ``rig runs --json``, ``rig logs --json``."""
        if not isinstance(values, Mapping) or not all(isinstance(key, str) for key in values):
            raise TaskError(f"Task {self.path}: step.metadata takes a JSON object (a dict with string keys)")
        bad = find_non_json(dict(values))
        if bad is not None:
            raise TaskError(f"Task {self.path}: step.metadata value {bad} must be JSON-serializable")
        plain = to_plain_json(dict(values))
        assert isinstance(plain, dict)
        self.recorded.update(plain)


class Namespace(Mapping[str, object]):
    """Attribute and item access over named values (the ``providers`` parameter)."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self._values = dict(values)

    def __getattr__(self, name: str) -> object:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{name} is not in scope (in scope: {', '.join(sorted(self._values))})") from None

    def __getitem__(self, name: str) -> object:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


@lazy_dataclass(frozen=True)
class NamedContext:
    """``workflow`` / ``workspace`` parameters: a name and its (read-only) context."""

    name: str
    ctx: object  # a read-only view (see freeze)


def wanted_parameters(fn: Handler) -> tuple[set[str], bool]:
    """The parameter names a handler takes, and whether it accepts **kwargs."""
    plain = plain_parameters(fn)  # a plain def: no inspect (speed/parameters.py)
    if plain is not None:
        names = {name for name, kind, _ in plain if kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
        return names, any(kind == VAR_KEYWORD for _, kind, _ in plain)

    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return set(), False
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names, any(p.kind is p.VAR_KEYWORD for p in parameters)


async def build_kwargs(
    fn: Handler, fixed: Mapping[str, object], providers: Mapping[str, RuntimeFactory]
) -> dict[str, object]:
    """Arguments for ``fn``: fixed values plus provider runtimes, made only when asked for."""
    names, takes_all = wanted_parameters(fn)
    wanted_providers = set(providers) if (takes_all or "providers" in names) else names & set(providers)
    runtimes = {name: await providers[name]() for name in sorted(wanted_providers)}
    values: dict[str, object] = {**runtimes, **fixed, "providers": Namespace(runtimes)}
    if takes_all:
        return values
    return {name: values[name] for name in names if name in values}


async def run_in_daemon_thread(fn: Callable[[], T], *, name: str) -> T:
    """Run ``fn`` in a daemon thread: after Ctrl-C a handler stuck in a sleep must not keep the
    interpreter alive (running commands are killed through the cancellation instead). Driven by
    hand (no loop: a fork's create hook), the runner does it and waits (``speed/coroutines.py``)."""
    if not loop_running():
        context = contextvars.copy_context()
        return await Blocking(functools.partial(context.run, fn), name)

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def target() -> None:
        outcome: Callable[[], None]
        try:
            outcome = functools.partial(future.set_result, context.run(fn))
        except BaseException as exc:  # handed to the awaiting task, which re-raises it
            outcome = functools.partial(future.set_exception, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone after an interrupt: nobody waits
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, name=f"rig:{name}", daemon=True).start()
    return await future


async def call_handler(fn: Handler, kwargs: dict[str, object], console: NodeConsole) -> object:
    """Run ``fn`` (async on the loop, sync in a worker thread) with its console captured."""
    from rigcli.engine import capture, system_call  # with logging, only when a handler really runs

    capture.install()
    system_call.install()  # a Ctrl-C during os.system must reach rig (see system_call.py)
    try:
        if iscoroutinefunction(fn):
            await need_event_loop()  # an async handler runs on the loop; a sync one needs none
            token = capture.activate(console)
            try:
                coroutine = fn(**kwargs)
                assert isawaitable(coroutine)
                return await coroutine
            except (Exception, KeyboardInterrupt, SystemExit, GeneratorExit):
                raise  # GeneratorExit here may be the loop closing this very coroutine
            except BaseException as exc:
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise HandlerBaseException(exc) from exc
            finally:
                capture.deactivate(token)

        def run_sync() -> object:
            token = capture.activate(console)
            try:
                return fn(**kwargs)
            except (Exception, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # GeneratorExit, a project's own subclass: the handler failed
                raise HandlerBaseException(exc) from exc
            finally:
                capture.deactivate(token)

        result = await run_in_daemon_thread(run_sync, name=console.node_path)
        if isawaitable(result):
            await need_event_loop()
            token = capture.activate(console)
            try:
                return await result
            finally:
                capture.deactivate(token)
        return result
    finally:
        console.flush()


def json_result(value: object, label: str) -> JsonValue:
    """Check an operation/hook result is JSON and return a plain copy."""
    value = _dumped(value)
    bad = find_non_json(value)
    if bad is not None:
        where = "" if bad == "<root>" else f" (at {bad})"
        raise TaskError(f"{label} must be JSON-serializable{where}")
    return to_plain_json(value)


def task_context(path: str, result: object, incoming: JsonValue) -> JsonValue | Invalidate:
    """Apply the return rules: {"ctx": {...}} replaces the context, None keeps it."""
    if isinstance(result, Invalidate):
        return result
    if result is None:
        return incoming if incoming is not None else {}
    if not isinstance(result, Mapping) or "ctx" not in result:
        raise TaskError(
            f"Task {path} returned a {type(result).__name__}; a task returns "
            '{"ctx": {...}} (whose value must be JSON-serializable), None, or step.invalidate(...)'
        )
    ctx = _dumped(result["ctx"])
    if not isinstance(ctx, Mapping):
        raise TaskError(f"Task {path} ctx must be a JSON-serializable object, not {type(ctx).__name__}")
    bad = find_non_json(ctx)
    if bad is not None:
        raise TaskError(f"Task {path} ctx value {bad} must be JSON-serializable")
    return to_plain_json(ctx)


def _dumped(value: object) -> object:
    """A pydantic model's JSON form (models are allowed wherever JSON is); anything else as is."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def validate_output(schema: object, ctx: JsonValue) -> JsonValue:
    """Run an ``output=`` schema (``model_validate`` or ``parse``); return the context it gives, or raise."""
    validate = getattr(schema, "model_validate", None) or getattr(schema, "parse", None)
    if not callable(validate):
        raise TypeError(f"output= needs model_validate or parse, not {type(schema).__name__}")
    parsed = _dumped(validate(ctx))
    if parsed is None:
        raise ValueError("output schema returned nothing")
    return to_plain_json(parsed)


__all__ = [
    "Invalidate",
    "NamedContext",
    "Namespace",
    "Step",
    "build_kwargs",
    "call_handler",
    "freeze",
    "json_result",
    "task_context",
    "validate_output",
    "wanted_parameters",
]
