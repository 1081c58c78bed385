"""Terminal prompts on stderr: pick one, pick several, confirm, free text. Callers check interactivity.

Rich's prompt machinery is imported when a person is first asked (``_rich``): a command that asks
nobody, with or without this module, imports no Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rigcli.errors import RigError
from rigcli.render.console import stderr_console
from rigcli.sanitize import sanitize

TYPE_CHECKING = False  # not typing's: a session imports this module and a cached plan imports no typing
if TYPE_CHECKING:
    from rich.prompt import Confirm, Prompt
    from rich.text import Text

Option = tuple[str, str]  # (value, description)


def _rich() -> tuple[type[Confirm], type[Prompt], type[Text]]:
    from rich.prompt import Confirm, Prompt
    from rich.text import Text

    return Confirm, Prompt, Text


def _ask(ask: Callable[[], str]) -> str:
    try:
        return ask()
    except (EOFError, KeyboardInterrupt) as exc:
        raise RigError("Cancelled") from exc


def _show_options(message: str, options: Sequence[Option]) -> None:
    _, _, Text = _rich()
    console = stderr_console()
    console.print(Text(sanitize(message), style="bold"))
    for number, (value, description) in enumerate(options, start=1):
        about = f"  {sanitize(description)}" if description else ""
        console.print(Text.assemble(f"  {number:>2}) ", (sanitize(value), "cyan"), (about, "dim")))


def select(message: str, options: Sequence[Option]) -> str:
    """One of ``options`` by number or by value."""
    if not options:
        raise RigError(f"{message}: nothing to choose from")
    _show_options(message, options)
    _, Prompt, _ = _rich()
    values = [value for value, _ in options]
    while True:
        answer = _ask(lambda: Prompt.ask("Choose", console=stderr_console(), default="1")).strip()
        chosen = _pick(answer, values)
        if chosen is not None:
            return chosen
        stderr_console().print(f"Enter a number from 1 to {len(values)}, or a name.")


def multi_select(message: str, options: Sequence[Option]) -> list[str]:
    """Several of ``options``: numbers or names separated by spaces or commas, or "all"."""
    if not options:
        return []
    _show_options(message, options)
    _, Prompt, _ = _rich()
    values = [value for value, _ in options]
    while True:
        answer = _ask(lambda: Prompt.ask("Choose (e.g. 1 3, or all)", console=stderr_console(), default=""))
        tokens = [token for token in answer.replace(",", " ").split() if token]
        if tokens == ["all"]:
            return values
        picked = [_pick(token, values) for token in tokens]
        if all(item is not None for item in picked):
            return list(dict.fromkeys(item for item in picked if item is not None))
        stderr_console().print(f"Enter numbers from 1 to {len(values)}, names, or all.")


def _pick(answer: str, values: Sequence[str]) -> str | None:
    if answer in values:
        return answer
    if answer.isdigit() and 1 <= int(answer) <= len(values):
        return values[int(answer) - 1]
    return None


def confirm(message: str, *, default: bool = False) -> bool:
    Confirm, _, _ = _rich()
    try:
        return bool(Confirm.ask(message, console=stderr_console(), default=default))
    except (EOFError, KeyboardInterrupt) as exc:
        raise RigError("Cancelled") from exc


def text(message: str, *, default: str | None = None, validate: Callable[[str], str | None] | None = None) -> str:
    """Free text; ``validate`` returns an error to show (and ask again) or None to accept."""
    _, Prompt, Text = _rich()
    while True:
        if default is None:
            answer = _ask(lambda: Prompt.ask(message, console=stderr_console()))
        else:
            answer = _ask(lambda: Prompt.ask(message, console=stderr_console(), default=default))
        problem = validate(answer) if validate else None
        if problem is None:
            return answer
        stderr_console().print(Text(problem, style="yellow"))


__all__ = ["Option", "confirm", "multi_select", "select", "text"]
