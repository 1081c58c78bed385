"""Route runs to the project store or a global fragment's store, and hold writer locks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rigcli.graph import LOCAL_STORE, FragmentSpec

LOCAL = LOCAL_STORE


def locate_fragment(locator: Callable[[FragmentSpec], Any] | None, fragment: FragmentSpec) -> Path:
    if locator is None:
        from rigcli.state.paths import fragments_dir

        return fragments_dir() / fragment.hash / "state.sqlite"
    located = locator(fragment)
    located = located.get("state_path") if isinstance(located, dict) else getattr(located, "state_path", located)
    if not isinstance(located, (str, Path)):
        raise TypeError("fragment_state_locator must return a path or {'state_path': path}")
    return Path(located)


class Stores:
    """The local store plus one store per global fragment, opened on first use."""

    def __init__(
        self,
        local: Any,
        *,
        project_dir: Path,
        locator: Callable[[FragmentSpec], Any] | None,
        lock_wait: bool,
        on_lock_wait: Callable[[Any], None] | None = None,
        on_lock_takeover: Callable[[Any], None] | None = None,
    ) -> None:
        self.local = local
        self._project_dir = project_dir
        self._locator = locator
        self._fragments: dict[str, Any] = {}
        self._fragment_specs: dict[str, FragmentSpec] = {}
        self._lock_wait = lock_wait
        self._on_lock_wait = on_lock_wait
        self._on_lock_takeover = on_lock_takeover
        self._locks: contextlib.ExitStack | None = None
        self._locked: set[str] = set()

    def register_fragments(self, fragments: dict[str, FragmentSpec]) -> None:
        self._fragment_specs.update(fragments)

    def get(self, key: str) -> Any:
        if key == LOCAL:
            return self.local
        store = self._fragments.get(key)
        if store is None:
            from rigcli.state import create_state_store

            path = locate_fragment(self._locator, self._fragment_specs[key])
            store = create_state_store(project_dir=self._project_dir, state_path=path)
            store.sync_schema()
            self._fragments[key] = store
        return store

    @staticmethod
    def workflow_column(key: str, workflow: str) -> str:
        return workflow if key == LOCAL else f"fragment:{key}"

    @contextlib.contextmanager
    def writing(self, command: str) -> Any:
        """Hold the project store's writer lock; fragment locks join as fragments are written."""
        if self._locks is not None:  # nested (fork applies first): the outer hold covers us
            yield
            return
        with contextlib.ExitStack() as stack:
            self._locks, self._command = stack, command
            try:
                stack.enter_context(self._lock(self.local, command))
                self._locked = {LOCAL}
                yield
            finally:
                self._locks, self._locked = None, set()

    def for_write(self, key: str) -> Any:
        store = self.get(key)
        if self._locks is not None and key not in self._locked:
            self._locks.enter_context(self._lock(store, self._command))
            self._locked.add(key)
        return store

    def _lock(self, store: Any, command: str) -> Any:
        return store.lock(command, wait=self._lock_wait, on_wait=self._on_lock_wait,
                          on_takeover=self._on_lock_takeover)

    def close(self) -> None:
        for store in self._fragments.values():
            store.close()
        self._fragments.clear()


__all__ = ["LOCAL", "Stores", "locate_fragment"]
