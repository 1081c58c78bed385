"""speed/awaitables.py answers as inspect does, for every kind of value the engine asks about."""

from __future__ import annotations

import asyncio
import functools
import inspect
import types
from collections.abc import Callable, Generator

import pytest

from rigcli.speed.awaitables import isawaitable, iscoroutinefunction


def plain(step):  # type: ignore[no-untyped-def]
    return step


async def coroutine_function(step):  # type: ignore[no-untyped-def]
    return step


@types.coroutine
def generator_coroutine() -> Generator[None, None, int]:
    yield
    return 1


def generator() -> Generator[int, None, None]:
    yield 1


class AwaitableThing:
    def __await__(self) -> Generator[None, None, int]:
        yield
        return 1


class Methods:
    def sync(self) -> None:
        return None

    async def asynchronous(self) -> None:
        return None


@functools.wraps(coroutine_function)
def wrapped_sync(step):  # type: ignore[no-untyped-def]
    return step


def with_attribute(step):  # type: ignore[no-untyped-def]
    return step


with_attribute.note = "set"  # type: ignore[attr-defined]

FUNCTIONS: list[Callable[..., object]] = [
    plain,
    coroutine_function,
    generator_coroutine,
    generator,
    Methods().sync,
    Methods().asynchronous,
    functools.partial(coroutine_function, 1),
    functools.partial(plain, 1),
    wrapped_sync,
    with_attribute,
    lambda: None,
    print,
    AwaitableThing,
]


@pytest.mark.parametrize(
    "fn", FUNCTIONS, ids=[f"{index}-{getattr(fn, '__name__', type(fn).__name__)}" for index, fn in enumerate(FUNCTIONS)]
)
def test_iscoroutinefunction_agrees_with_inspect(fn: Callable[..., object]) -> None:
    assert iscoroutinefunction(fn) is inspect.iscoroutinefunction(fn)


def test_isawaitable_agrees_with_inspect() -> None:
    loop = asyncio.new_event_loop()
    coroutine = coroutine_function(1)
    made = generator_coroutine()
    values: list[object] = [
        None,
        1,
        {"ctx": {}},
        "text",
        coroutine,
        made,
        generator(),
        AwaitableThing(),
        AwaitableThing,
        loop.create_future(),
        plain,
    ]
    try:
        for value in values:
            assert isawaitable(value) is inspect.isawaitable(value), value
    finally:
        coroutine.close()
        made.close()
        loop.close()
