"""Adapt whatever the embedding host passes as ``local=`` into a full LocalHost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rigcli.host import TerminalHost


class HostAdapter:
    """Methods the host supplied win; the rest come from the default terminal host."""

    def __init__(self, supplied: Any, fallback: TerminalHost) -> None:
        self._supplied = supplied
        self._fallback = fallback

    def _method(self, name: str) -> Any:
        supplied = self._supplied
        method = supplied.get(name) if isinstance(supplied, Mapping) else getattr(supplied, name, None)
        return method if callable(method) else getattr(self._fallback, name)

    @property
    def interactive(self) -> bool:
        supplied = self._supplied
        value = supplied.get("interactive") if isinstance(supplied, Mapping) else getattr(supplied, "interactive", None)
        return self._fallback.interactive if value is None else bool(value)

    def open(self, target: str) -> Any:
        return self._method("open")(target)

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        return str(self._method("prompt")(message, default=default, secret=secret))

    def confirm(self, message: str, *, default: bool = False) -> bool:
        return bool(self._method("confirm")(message, default=default))

    def run(self, argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None) -> int:
        return int(self._method("run")(argv, cwd=cwd, env=env))


def adapt_local(local: Any) -> Any:
    if local is None:
        return TerminalHost()
    if isinstance(local, (TerminalHost, HostAdapter)):
        return local
    return HostAdapter(local, TerminalHost())


__all__ = ["HostAdapter", "adapt_local"]
