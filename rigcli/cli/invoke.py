"""Running a Call: import its body, give it a Session (or only the options), map what it raises."""

from __future__ import annotations

import sys
from collections.abc import Callable

from rigcli.cli import signalled
from rigcli.cli.error_handler import run_guarded
from rigcli.cli.session import Session
from rigcli.cli.spec import Call
from rigcli.speed.imports import import_for_the_full_way


def load_body(path: str) -> Callable[..., int]:
    """The function ``module:name`` names, imported now (bodies are imported only when they run)."""
    module, _, name = path.partition(":")
    # Not importlib.import_module: importing importlib (and warnings with it) costs a hot command
    # line a third of what reading it by the table does.
    __import__(module)
    body: Callable[..., int] = getattr(sys.modules[module], name)
    return body


def run_call(call: Call, argv: list[str] | None = None) -> int:
    """Run the call's body inside the one error handler; its exit code (``finish`` is the caller's).

    With --json-stream, stdout is the stream from here on; it ends with the summary (``json_output.py``).
    """

    def guarded() -> int:
        with signalled.raising():  # click may have called us with signals held (app.py)
            if call.needs == "options":
                return load_body(call.body)(call.opts, **call.kwargs)
            if not call.cache:  # it loads the engine: records and paths first, without their rare branches
                import_for_the_full_way()
            body = load_body(call.body)
            with Session(call.opts, cache=call.cache) as session:
                return body(session, **call.kwargs)

    if not call.opts.json_stream:
        return run_guarded(guarded, argv=argv, error_code=call.error_code)
    from rigcli.cli import error_handler, json_output

    json_output.begin_stream()
    code = run_guarded(guarded, argv=argv, error_code=call.error_code)
    json_output.end_stream(code, error_handler.last_error)
    return code


__all__ = ["load_body", "run_call"]
