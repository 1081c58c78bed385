"""devcontainer.json read as JSONC (comments, trailing commas), a syntax error placed as FILE:LINE:COLUMN."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from rigcli.errors import ConfigError
from rigcli.load_inputs import note_inputs
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import json5
else:
    json5 = lazy_module("json5")


# json5's own wording: '<string>:3 Unexpected "}" at column 8' (line and column both 1-based).
_PLACE = re.compile(r"^<string>:(?P<line>\d+) (?P<what>.*?)(?: at column (?P<column>\d+))?$", re.DOTALL)


def read_jsonc(path: Path) -> object:
    """The parsed document; a ConfigError naming ``path``, line and column when it is not JSONC."""
    note_inputs([str(path)])
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return parse_jsonc(text, str(path))


def parse_jsonc(text: str, where: str) -> object:

    text = text.removeprefix("\ufeff")  # a byte order mark, as editors on Windows write
    try:
        return json5.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}:{_position(str(exc), text)}: {_message(str(exc))}") from None


def _position(message: str, text: str) -> str:
    found = _PLACE.match(message)
    if found is None:  # the document ended early, or json5 said it in other words
        lines = text.splitlines() or [""]
        return f"{len(lines)}:{len(lines[-1]) + 1}"
    return f"{found['line']}:{found['column'] or 1}"


def _message(message: str) -> str:
    found = _PLACE.match(message)
    what = found["what"] if found is not None else message
    return f"JSONC syntax error: {what}"


__all__ = ["parse_jsonc", "read_jsonc"]
