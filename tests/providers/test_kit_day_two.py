"""provider_kit after fork: a kit controller gets live status from machine_status, and stop/start
and shell/exec from the MachinePower and MachineAttach mixins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from rigcli.errors import ProviderError
from rigcli.provider_api import EffectEntry, LiveStatus, SupportsInteractive, SupportsPower, SupportsStatus
from rigcli.provider_kit import BaseController, MachineAttach, MachinePower


class Kit(MachinePower, MachineAttach, BaseController):
    provider_id = "kit"

    def __init__(self, setup: Any = None) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.states = {"m-1": LiveStatus("running", "up"), "m-2": LiveStatus("stopped", "halted")}

    def machine_status(self, machine_id: str) -> LiveStatus | None:
        if machine_id == "m-broken":
            raise ProviderError("the cloud API said 500")
        return self.states.get(machine_id)

    def stop_machine(self, machine_id: str) -> None:
        self.calls.append(("stop", machine_id))

    def start_machine(self, machine_id: str) -> None:
        self.calls.append(("start", machine_id))

    def attach_machine(
        self, machine_id: str, argv: Sequence[str] | None, *, tty: bool, env: Mapping[str, str], cwd: str | None
    ) -> int:
        self.calls.append(("attach", machine_id, *(argv or ["<shell>"])))
        return 3


def entry(effect_id: str, kind: str = "machine") -> EffectEntry:
    return {"id": effect_id, "kind": kind, "resource": {}}


def test_a_kit_controller_offers_the_capabilities_it_mixes_in() -> None:
    kit = Kit()
    assert isinstance(kit, SupportsStatus) and isinstance(kit, SupportsPower) and isinstance(kit, SupportsInteractive)


def test_probe_answers_machines_from_machine_status_and_leaves_the_rest_out() -> None:
    answers = Kit().probe(
        [entry("m-1"), entry("m-2"), entry("m-unknown-to-it"), entry("m-broken"), entry("s-1", "snapshot")]
    )
    assert answers == {
        "m-1": LiveStatus("running", "up"),
        "m-2": LiveStatus("stopped", "halted"),
        "m-broken": LiveStatus("unknown", "the cloud API said 500"),
    }


def test_stop_start_and_attach_reach_the_hooks_for_machines_only() -> None:
    kit = Kit()
    kit.stop(entry("m-1"))
    kit.start(entry("m-1"))
    assert kit.attach(entry("m-2"), ["true"], tty=False, env={}, cwd=None) == 3
    assert kit.calls == [("stop", "m-1"), ("start", "m-1"), ("attach", "m-2", "true")]
    with pytest.raises(ProviderError, match="only machines"):
        kit.stop(entry("s-1", "snapshot"))
