"""Route runs to the project store or a global fragment's store, and hold writer locks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from os import PathLike
from pathlib import Path

from rigcli.events import Event, StateLockTakeover, StateLockWaiting
from rigcli.graph import LOCAL_STORE, FragmentSpec
from rigcli.layout import STATE_FILE
from rigcli.records import LockHolder
from rigcli.state.api import StateStore
from rigcli.state.paths import fragments_dir

LOCAL = LOCAL_STORE

# An embedding host may keep fragment caches elsewhere: a path, or {"state_path": path}.
FragmentLocation = str | PathLike[str] | Mapping[str, str]
FragmentLocator = Callable[[FragmentSpec], FragmentLocation]
OpenStore = Callable[[Path], StateStore]


def locate_fragment(locator: FragmentLocator | None, fragment: FragmentSpec) -> Path:
    """``$RIG_HOME/fragments/<hash>/state.sqlite`` unless the host's locator says otherwise."""
    if locator is None:
        return fragments_dir() / fragment.hash / STATE_FILE
    located = locator(fragment)
    if isinstance(located, Mapping):
        located = located.get("state_path", "")
    if not isinstance(located, (str, PathLike)) or not str(located):
        raise TypeError("fragment_state_locator must return a path or {'state_path': path}")
    return Path(located)


class Stores:
    """The project store plus one store per global fragment, opened on first use.

    Writers hold the project store's lock for the whole command (``writing``); a fragment's
    lock joins the first time the command writes to that fragment (``for_write``).
    """

    def __init__(
        self,
        local: StateStore,
        *,
        open_store: OpenStore,
        locator: FragmentLocator | None,
        lock_wait: bool,
        emit: Callable[[Event], None],
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.local = local
        self._open_store = open_store
        self._locator = locator
        self._fragments: dict[str, StateStore] = {}
        self._fragment_specs: dict[str, FragmentSpec] = {}
        self._lock_wait = lock_wait
        self._emit = emit
        self._cancelled = cancelled  # ends a wait for another holder (an interrupted command)
        self._locks: contextlib.ExitStack | None = None
        self._command = ""
        self._locked: set[str] = set()

    def register_fragments(self, fragments: Mapping[str, FragmentSpec]) -> None:
        self._fragment_specs.update(fragments)

    def get(self, key: str) -> StateStore:
        """The store for ``key``: ``LOCAL`` or a fragment hash registered before."""
        if key == LOCAL:
            return self.local
        store = self._fragments.get(key)
        if store is None:
            # A shared project database shares its fragments too (PostgreSQL: the fragments
            # schema), unless the embedding host keeps them elsewhere.
            beside = self.local.fragment_store(key) if self._locator is None else None
            store = beside or self._open_store(locate_fragment(self._locator, self._fragment_specs[key]))
            store.sync_schema()
            self._fragments[key] = store
        return store

    @staticmethod
    def workflow_column(key: str, workflow: str) -> str:
        """What a store's ``workflow`` column holds: the workflow, or ``fragment:<hash>`` in a fragment."""
        return workflow if key == LOCAL else f"fragment:{key}"

    @contextlib.contextmanager
    def writing(self, command: str, *, wait: bool | None = None) -> Iterator[None]:
        """Hold the project store's writer lock while the block runs. ``wait=False``: raise
        StateLockedError at once when another process holds it (default: as the command said)."""
        if self._locks is not None:
            raise RuntimeError("nested writers: the outer command already holds the state lock")
        with contextlib.ExitStack() as stack:
            self._locks, self._command = stack, command
            try:
                stack.enter_context(self._lock(self.local, wait))
                self._locked = {LOCAL}
                yield
            finally:
                self._locks, self._locked = None, set()

    def for_write(self, key: str) -> StateStore:
        """The store for ``key``, its lock taken for the rest of the command if it is not yet."""
        store = self.get(key)
        if self._locks is not None and key not in self._locked:
            self._locks.enter_context(self._lock(store))
            self._locked.add(key)
        return store

    def held(self) -> list[str]:
        """The stores (keys) whose writer lock this command holds now."""
        return sorted(self._locked)

    def _lock(self, store: StateStore, wait: bool | None = None) -> contextlib.AbstractContextManager[LockHolder]:
        return store.lock(
            self._command,
            wait=self._lock_wait if wait is None else wait,
            on_wait=lambda holder: self._emit(StateLockWaiting(holder=holder)),
            on_takeover=lambda holder: self._emit(StateLockTakeover(holder=holder)),
            cancelled=self._cancelled,
        )

    def close(self) -> None:
        for store in self._fragments.values():
            store.close()
        self._fragments.clear()


__all__ = ["LOCAL", "FragmentLocator", "Stores", "locate_fragment"]
