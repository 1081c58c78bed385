"""Adapt whatever the embedding host passes as ``local=`` into a full LocalHost."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, cast, overload

from rigcli.host import TerminalHost
from rigcli.provider_api import CapturedRun, LocalHost
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import inspect
else:
    inspect = lazy_module("inspect")


# An embedding host may pass a LocalHost, or any object or mapping with some of its methods
# (``open``, ``prompt``, ``confirm``, ``run``, ``request_capability``) and ``interactive``; the
# rest come from TerminalHost.
SuppliedHost = LocalHost | Mapping[str, object] | object


class HostAdapter:
    """Methods the host supplied win; the rest come from the default terminal host."""

    def __init__(self, supplied: object, fallback: TerminalHost) -> None:
        self._supplied = supplied
        self._fallback = fallback

    def _lookup(self, name: str) -> object:
        supplied = self._supplied
        return supplied.get(name) if isinstance(supplied, Mapping) else getattr(supplied, name, None)

    def _method(self, name: str) -> Callable[..., object]:
        method = self._lookup(name)
        if callable(method):
            return method
        fallback: Callable[..., object] = getattr(self._fallback, name)
        return fallback

    @property
    def interactive(self) -> bool:
        value = self._lookup("interactive")
        return self._fallback.interactive if value is None else bool(value)

    def open(self, target: str) -> object:
        return self._method("open")(target)

    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str:
        return str(self._method("prompt")(message, default=default, secret=secret))

    def confirm(self, message: str, *, default: bool = False) -> bool:
        return bool(self._method("confirm")(message, default=default))

    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[False] = False,
    ) -> int: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[True],
    ) -> CapturedRun: ...
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: bool = False,
    ) -> int | CapturedRun:
        if capture:
            supplied = self._lookup("run")
            if callable(supplied) and _takes(supplied, "capture"):
                result = supplied(argv, cwd=cwd, env=env, capture=True)
                return cast(CapturedRun, result)
            # A host that cannot capture: the default host runs it, under the same consent policy.
            return self._fallback.run(argv, cwd=cwd, env=env, capture=True)
        code = self._method("run")(argv, cwd=cwd, env=env)
        return code if isinstance(code, int) else int(str(code))

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        return self._method("request_capability")(capability_id, params)


def _takes(method: Callable[..., object], name: str) -> bool:

    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(item.name == name or item.kind is inspect.Parameter.VAR_KEYWORD for item in parameters)


def adapt_local(local: SuppliedHost | None) -> LocalHost:
    """The host the engine talks to: the default terminal host, the caller's, or an adapter over it."""
    if local is None:
        return TerminalHost()
    if isinstance(local, (TerminalHost, HostAdapter)):
        return local
    return HostAdapter(local, TerminalHost())


__all__ = ["HostAdapter", "SuppliedHost", "adapt_local"]
