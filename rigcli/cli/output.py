"""stdout for results: exactly one JSON document in --json mode, and whether stdout is a terminal."""

from __future__ import annotations

import json
import sys


def emit_json(document: object) -> None:
    """The command's whole stdout in --json mode: one indented document and a newline."""
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=_fallback) + "\n")
    sys.stdout.flush()


def _fallback(value: object) -> object:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["emit_json", "stderr_is_terminal", "stdout_is_terminal"]
