"""Interactions: hand a provider's request to the host, wait for completion, always stop once."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypedDict

from rigcli.engine.invoke import run_in_daemon_thread
from rigcli.engine.providers import maybe_await
from rigcli.errors import ProviderError
from rigcli.events import Event, InteractionAwaitingUser, InteractionCompleted
from rigcli.provider_api import InteractionRequest, LocalHost
from rigcli.speed.coroutines import loop_running
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import asyncio
    import inspect
else:
    asyncio = lazy_module("asyncio")
    inspect = lazy_module("inspect")


class ShownInteraction(TypedDict):
    """What an embedding host's presenter receives: show it, do not block."""

    node_path: str
    id: str
    title: str
    url: str | None
    instructions: str | None


Presenter = Callable[[ShownInteraction], object]


def host_presenter(interaction: object) -> Presenter | None:
    """The host's ``present`` (from ``interaction=``: an object or a mapping with one), or None."""
    if interaction is None:
        return None
    present = interaction.get("present") if isinstance(interaction, Mapping) else getattr(interaction, "present", None)
    if present is None or not callable(present):
        raise ProviderError("interaction= must provide present(request)")
    presenter: Presenter = present
    return presenter


async def _wait_for(completed: object) -> object:
    import concurrent.futures

    if isinstance(completed, concurrent.futures.Future):
        return await asyncio.wrap_future(completed)
    if inspect.isawaitable(completed):
        return await completed
    if callable(completed):
        return await run_in_daemon_thread(completed, name="interaction")
    return completed


class InteractionBroker:
    """One per node: implements ``context.interaction`` for provider runtimes."""

    def __init__(
        self,
        *,
        node_path: str,
        emit: Callable[[Event], None],
        presenter: Presenter | None,
        local: LocalHost,
    ) -> None:
        self._node_path = node_path
        self._emit = emit
        self._presenter = presenter
        self._local = local
        # Made right before a handler runs: on the event loop, which sync provider code in worker
        # threads reaches back to through present_blocking, or with none (a sync hook run while
        # the runner waits, see speed/coroutines.py): then present_blocking runs a loop of its own.
        self._loop: asyncio.AbstractEventLoop | None = None
        if loop_running():
            self._loop = asyncio.get_running_loop()

    async def present(self, request: InteractionRequest) -> object:
        stop = request.get("stop")
        try:
            interaction_id = request.get("id") or os.urandom(16).hex()
            title = request.get("title", "")
            url = request.get("url")
            instructions = request.get("instructions")
            self._emit(
                InteractionAwaitingUser(
                    node_path=self._node_path,
                    interaction_id=interaction_id,
                    title=title,
                    url=url,
                    instructions=instructions,
                )
            )
            shown: ShownInteraction = {
                "node_path": self._node_path,
                "id": interaction_id,
                "title": title,
                "url": url,
                "instructions": instructions,
            }
            if self._presenter is not None:
                await maybe_await(self._presenter(shown))
            else:
                if not self._local.interactive:
                    raise ProviderError(
                        f'Interaction "{title}" needs a user at a terminal, and this run has none'
                        + (f"; open {url} yourself or run rig in a terminal" if url else "")
                    )
                if url:
                    await maybe_await(self._local.open(url))
            result = await _wait_for(request.get("completed"))
            self._emit(InteractionCompleted(node_path=self._node_path, interaction_id=interaction_id, title=title))
            return result
        finally:
            if stop is not None:
                await maybe_await(stop())

    def present_blocking(self, request: InteractionRequest) -> object:
        """For sync provider code running in a worker thread."""

        if self._loop is None:  # no loop runs the engine: this worker thread has nothing to wait for
            return asyncio.run(self.present(request))
        future = asyncio.run_coroutine_threadsafe(self.present(request), self._loop)
        return future.result()


__all__ = ["InteractionBroker", "Presenter", "ShownInteraction", "host_presenter"]
