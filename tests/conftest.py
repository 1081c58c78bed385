"""Shared test setup: each test gets its own RIG_HOME and host storage, no colour and no browser."""

from __future__ import annotations

import pytest

# Variables that change how rig renders or behaves; tests opt in to them explicitly.
_BEHAVIOUR_VARIABLES = ("RIG_DEBUG", "RIG_RENDER", "RIG_NO_CONSOLE_INTERCEPT", "RIG_TRUST_HOST_COMMANDS")


@pytest.fixture(autouse=True)
def _isolated_rig_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("rig-home")
    monkeypatch.setenv("RIG_HOME", str(home))
    monkeypatch.setenv("RIG_HOST_STORAGE_DIR", str(home / "providers"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("RIG_NO_BROWSER", "1")
    for name in _BEHAVIOUR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
