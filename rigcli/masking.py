"""The process-wide secret registry and the masker every output boundary applies.

Secret values are registered when provider config resolves (``secret(...)``), when a project is
loaded (the values its ``secret(...)`` references name), and when a provider marks one
(``setup.mark_secret(value)``). Events, stored rows, error messages, JSON documents and crash
logs pass through ``mask_text`` / ``mask_value`` on their way out; each is a no-op while nothing
is registered, so a project without secrets pays nothing.
"""

from __future__ import annotations

import _thread
from collections.abc import Iterable, Mapping

from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: this module is on `rig logs TASK` answered from the cache, which imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

if TYPE_CHECKING:
    import dataclasses
    import re
else:
    dataclasses = lazy_module("dataclasses")
    re = lazy_module("re")


MASK = "***"
# Masking a two-character value would garble every line of output it happens to occur in.
# The rule holds for each line of a multi-line value too: its short lines are not masked.
MIN_LENGTH = 4

_lock = _thread.allocate_lock()  # threading.Lock itself, without importing threading
_values: frozenset[str] = frozenset()
_pattern: re.Pattern[str] | None = None


def pieces(value: str) -> set[str]:
    """What of ``value`` is masked: the value without surrounding whitespace, and each of its lines.

    Output reaches the user line by line (a PEM key printed or logged shows as separate lines), and
    a value read from a file or a variable often ends in a newline that ``print`` or ``$(...)`` does
    not reproduce; either way the value never appears whole. Pieces shorter than MIN_LENGTH are
    left alone, so a short line of a multi-line value is not masked.
    """
    found = {line.strip() for line in value.splitlines()}
    found.add(value.strip())
    return {piece for piece in found if len(piece) >= MIN_LENGTH}


def register(*values: object) -> None:
    """Mask these strings from now on: every piece of each (see ``pieces``)."""
    global _values, _pattern
    fresh = {piece for value in values if isinstance(value, str) for piece in pieces(value)}
    with _lock:
        if fresh <= _values:
            return
        _values = _values | fresh
        # Longest first, so a secret that contains another is masked whole.
        ordered = sorted(_values, key=len, reverse=True)

        _pattern = re.compile("|".join(re.escape(value) for value in ordered))


def registered() -> frozenset[str]:
    return _values


def reset() -> None:
    """Forget every registered value (for embedding hosts and tests that reuse a process)."""
    global _values, _pattern
    with _lock:
        _values, _pattern = frozenset(), None


def active() -> bool:
    return _pattern is not None


def mask_text(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def mask_value(value: object) -> object:
    """A copy of a JSON-shaped value with secrets masked in every string, keys included.

    Returns ``value`` itself when nothing needed masking, so callers can tell cheaply.
    """
    if _pattern is None:
        return value
    return _mask(value, 0)


def _mask(value: object, depth: int) -> object:
    if isinstance(value, str):
        return mask_text(value)
    if depth > 200:  # deeper than any real document; what is below is shown as nothing
        return MASK
    if isinstance(value, Mapping):
        pairs = list(value.items())
        items = [(_mask(key, depth + 1), _mask(item, depth + 1)) for key, item in pairs]
        if all(new[0] is old[0] and new[1] is old[1] for new, old in zip(items, pairs, strict=True)):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        masked = [_mask(item, depth + 1) for item in value]
        if all(new is old for new, old in zip(masked, value, strict=True)):
            return value
        return masked if isinstance(value, list) else tuple(masked)
    return value


def mask_fields(item: T) -> T:
    """A dataclass instance with every field masked; the same instance when nothing changed."""
    if _pattern is None:
        return item

    if not dataclasses.is_dataclass(item) or isinstance(item, type):
        return item
    changes: dict[str, object] = {}
    for field in dataclasses.fields(item):
        if field.init:
            old = getattr(item, field.name)
            new = mask_value(old)
            if new is not old:
                changes[field.name] = new
    return dataclasses.replace(item, **changes) if changes else item


class StreamMasker:
    """Masks a stream that arrives in chunks: a secret split across two chunks is still masked.

    ``feed`` returns what is safe to show now and holds back the end of the chunk when it could
    be the start of a secret; ``flush`` returns what is held.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        if _pattern is None:
            held, self._held = self._held, ""
            return held + chunk
        text = mask_text(self._held + chunk)
        keep = _partial_secret_suffix(text, _values)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return mask_text(held)


def _partial_secret_suffix(text: str, values: Iterable[str]) -> int:
    """The length of the longest end of ``text`` that is a proper start of some secret."""
    longest = 0
    for value in values:
        for size in range(min(len(value) - 1, len(text)), longest, -1):
            if text.endswith(value[:size]):
                longest = size
                break
    return longest


__all__ = [
    "MASK",
    "MIN_LENGTH",
    "StreamMasker",
    "active",
    "mask_fields",
    "mask_text",
    "mask_value",
    "pieces",
    "register",
    "registered",
    "reset",
]
