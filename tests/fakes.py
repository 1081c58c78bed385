"""A fake workflow provider for engine tests: in-memory VMs, snapshots and terminal interactions.

It is a port of the reference suite's ``FakeWorkflowProvider``. VMs are sets of file paths;
``touch PATH`` adds a path, ``test -e PATH`` checks one. Snapshots are artifact refs
``{"provider": "test", "kind": "vmSnapshot", "snapshot_id": "snap-N"}``. VM methods are plain
functions (handlers may be sync or async); ``open_terminal`` is async because it awaits the
engine's interaction broker.

Use it with ``create_engine(..., provider_factory=lambda setup: provider)`` (or
``provider_factory=fresh_fake_provider`` for a new fake per setup) or wrap it in a
:class:`FakePlugin` and pass ``providers=[plugin]``.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

PROVIDER_ID = "test"

_TOUCH = re.compile(r"^touch (.+)$")
_TEST_EXISTS = re.compile(r"^test -e (.+)$")


def exec_result(ok: bool) -> dict[str, Any]:
    return {"stdout": "", "stderr": "", "exit_code": 0 if ok else 1, "ok": ok}


def is_fake_snapshot_ref(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and value.get("provider") == PROVIDER_ID
        and value.get("kind") == "vmSnapshot"
        and isinstance(value.get("snapshot_id"), str)
    )


class FakeVm:
    """One VM as a handler sees it."""

    def __init__(self, provider: FakeWorkflowProvider, vm_id: str, context: Any) -> None:
        self._provider = provider
        self._context = context
        self.vm_id = vm_id

    def exec(self, command: str, name: str | None = None) -> dict[str, Any]:
        return self._provider.exec(self.vm_id, command, throw_on_failure=True)

    def probe(self, command: str, name: str | None = None) -> dict[str, Any]:
        return self._provider.exec(self.vm_id, command, throw_on_failure=False)

    def exists(self, path: str) -> bool:
        return self._provider.has_file(self.vm_id, path)

    def snapshot_ref(self) -> dict[str, Any]:
        return self._provider.create_snapshot(self.vm_id)


class FakeRuntime:
    """What ``controller.runtime(context)`` returns: the object handlers receive as ``test``."""

    def __init__(self, provider: FakeWorkflowProvider, context: Any) -> None:
        self._provider = provider
        self.context = context

    @property
    def config(self) -> Mapping[str, Any]:
        """The resolved provider config this controller was created with."""
        return self._provider.config

    def create_vm(self) -> FakeVm:
        return self._provider.create_vm(self.context)

    def from_snapshot(self, ref: Any) -> FakeVm:
        return self._provider.create_vm(self.context)

    def from_id(self, vm_id: str) -> FakeVm:
        return FakeVm(self._provider, vm_id, self.context)

    def meet(self) -> int:
        """Wait on the provider's shared barrier (proves that two branches run at the same time)."""
        barrier = self._provider.barrier
        if barrier is None:
            raise RuntimeError("FakeWorkflowProvider(barrier=...) was not given")
        return barrier.wait()

    async def open_terminal(self, label: str, command: str) -> Any:
        provider = self._provider
        completed = provider.terminal_completed
        if completed is None:
            done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            done.set_result({"finished": True})
            completed = done

        def stop() -> None:
            with provider.lock:
                provider.terminal_stopped += 1

        return await self.context.interaction.present(
            {
                "id": "fake-terminal",
                "title": label,
                "url": "http://127.0.0.1/fake-terminal",
                "completed": completed,
                "stop": stop,
            }
        )


class FakeWorkflowProvider:
    """A provider controller with in-memory VMs (``provider_id = "test"``)."""

    provider_id = PROVIDER_ID

    def __init__(
        self,
        *,
        terminal_completed: Awaitable[Any] | None = None,
        config: Mapping[str, Any] | None = None,
        barrier: threading.Barrier | None = None,
    ) -> None:
        self.terminal_completed = terminal_completed
        self.barrier = barrier
        self.config: Mapping[str, Any] = dict(config or {})
        self.snapshots: list[dict[str, Any]] = []
        self.next_vm = 1
        self.files: dict[str, set[str]] = {}
        self.terminal_stopped = 0
        self.runtime_contexts: list[Any] = []
        # Flip to False to make every artifact of this provider invalid (the VM snapshot is "gone").
        self.artifacts_valid = True
        self.validated: list[Any] = []
        # Parallel branches may call into the provider from several threads at once.
        self.lock = threading.RLock()

    def runtime(self, context: Any) -> FakeRuntime:
        with self.lock:
            self.runtime_contexts.append(context)
        return FakeRuntime(self, context)

    def validate_artifact(self, ref: Any) -> bool:
        with self.lock:
            self.validated.append(ref)
        return self.artifacts_valid and is_fake_snapshot_ref(ref)

    def has_file(self, vm_id: str, path: str) -> bool:
        with self.lock:
            return path in self.files.get(vm_id, set())

    def create_vm(self, context: Any) -> FakeVm:
        with self.lock:
            vm_id = f"vm-{self.next_vm}"
            self.next_vm += 1
            self.files[vm_id] = set()
        context.emit({"type": "vm.created", "provider_id": PROVIDER_ID, "vm_id": vm_id})
        return FakeVm(self, vm_id, context)

    def exec(self, vm_id: str, command: str, *, throw_on_failure: bool) -> dict[str, Any]:
        with self.lock:
            files = self.files.get(vm_id)
            if files is None:
                raise RuntimeError(f"unknown fake vm {vm_id}")
            touch = _TOUCH.match(command)
            if touch:
                files.add(touch.group(1))
            exists = _TEST_EXISTS.match(command)
            if exists:
                path = exists.group(1).strip("'")
                return exec_result(path in files)
        output = exec_result(True)
        if throw_on_failure and not output["ok"]:
            raise RuntimeError("command failed")
        return output

    def create_snapshot(self, vm_id: str) -> dict[str, Any]:
        with self.lock:
            snapshot = {
                "provider": PROVIDER_ID,
                "kind": "vmSnapshot",
                "snapshot_id": f"snap-{len(self.snapshots) + 1}",
            }
            self.snapshots.append(snapshot)
            return dict(snapshot)


def fresh_fake_provider(setup: Any) -> FakeWorkflowProvider:
    """A ``provider_factory`` that gives every provider setup a new fake of its own (config ignored)."""
    return FakeWorkflowProvider()


class FakePlugin:
    """A provider plugin (``provider_id`` + ``create_provider(setup)``) around a factory."""

    def __init__(
        self,
        create: Callable[[Any], Any] | None = None,
        *,
        provider_id: str = PROVIDER_ID,
    ) -> None:
        self.provider_id = provider_id
        self._create = create or (lambda setup: FakeWorkflowProvider(config=setup.config))
        self.setups: list[Any] = []

    def create_provider(self, setup: Any) -> Any:
        self.setups.append(setup)
        return self._create(setup)


__all__ = [
    "PROVIDER_ID",
    "FakePlugin",
    "FakeRuntime",
    "FakeVm",
    "FakeWorkflowProvider",
    "exec_result",
    "fresh_fake_provider",
    "is_fake_snapshot_ref",
]
