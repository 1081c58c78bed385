"""stdout for results: exactly one JSON document in --json mode, and whether stdout is a terminal."""

from __future__ import annotations

import json
import sys

from rigcli import masking


def emit_json(document: object) -> None:
    """The command's whole stdout in --json mode: one indented document and a newline.

    Every --json document passes here, so secrets are masked here.
    """
    sys.stdout.write(json.dumps(shown(document), indent=2, ensure_ascii=False, default=_fallback) + "\n")
    sys.stdout.flush()


def shown(value: object) -> object:
    """``value`` as it may be shown to the user: JSON-shaped, with secrets masked."""
    if not masking.active():
        return value
    return masking.mask_value(json.loads(json.dumps(value, ensure_ascii=False, default=_fallback)))


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


__all__ = ["emit_json", "shown", "stderr_is_terminal", "stdout_is_terminal"]
