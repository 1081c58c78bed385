"""JSON read and written with the interpreter's own C code, without importing the ``json`` package.

``json`` imports ``re`` (its pure-Python decoder's and encoder's patterns), and ``re`` brings
``enum``: ~30M instructions, a fifth of a ``rig ls`` that reads its workspaces' JSON columns and
the daemon's answer. ``json.loads`` itself runs ``_json``'s C scanner (``c_make_scanner``) for
every value; this asks that scanner directly, with the decoder's defaults. A text the scanner
does not read whole is handed to ``json.loads``, which raises what it always raises. Writing
asks ``_json``'s C encoder (``c_make_encoder``) as ``json.dumps`` does with its defaults.
"""

from __future__ import annotations

import _json

_WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE


class _Defaults:
    """What ``c_make_scanner`` reads of a ``json.JSONDecoder()``: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


_scan = _json.make_scanner(_Defaults())  # type: ignore[arg-type]  # it reads these attributes only


def loads(text: str) -> object:
    """``json.loads(text)`` for a ``str``."""
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError):
        value, end = None, -1
    if end < 0 or text[end:].strip(_WHITESPACE):
        import json  # not JSON (or more than one value): json says what is wrong, in its words

        return json.loads(text)
    return value


def loads_bytes(data: bytes) -> object:
    """``json.loads(data)``: UTF-8 as ``json.detect_encoding`` finds it (anything else, json reads)."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:4]:
        import json

        return json.loads(data)
    return loads(data.decode("utf-8", "surrogatepass"))


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")  # json's words


def dumps(value: object) -> str:
    """``json.dumps(value)`` with its defaults: the C encoder json.dumps runs, ASCII strings, ", " and
    ": " (made per call, as json does: its circular-reference markers must start empty)."""
    encode = _json.make_encoder(
        {}, _unserializable, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return "".join(encode(value, 0))


def string(text: str) -> str:
    """``json.dumps(text)``: the string quoted and escaped, non-ASCII as ``\\uXXXX``."""
    quoted: str = _json.encode_basestring_ascii(text)
    return quoted


__all__ = ["dumps", "loads", "loads_bytes", "string"]
