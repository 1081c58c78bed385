"""A third-party provider is checked against the plugin Protocols by mypy, like the built-ins are."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PLUGIN = """
from __future__ import annotations

from collections.abc import Mapping

from rigcli.jsonutil import JsonValue
from rigcli.provider_api import (
    ProviderController,
    ProviderPlugin,
    ProviderSetup,
    RuntimeContext,
    SupportsArtifactValidation,
)


class Runtime:
    def __init__(self, context: RuntimeContext) -> None:
        self.context = context

    def hello(self) -> str:
        self.context.emit({"type": "vm.created", "vm_id": "vm-1"})
        return "hi"


class Controller:
    provider_id = "acme"

    def __init__(self, setup: ProviderSetup) -> None:
        self.setup = setup

    def runtime(self, context: RuntimeContext) -> Runtime:
        return Runtime(context)

    def validate_artifact(self, ref: Mapping[str, JsonValue]) -> bool:
        return ref.get("kind") == "acmeImage"


class Plugin:
    provider_id = "acme"

    def create_provider(self, setup: ProviderSetup) -> Controller:
        return Controller(setup)


plugin: ProviderPlugin = Plugin()
controller: ProviderController = Controller.__new__(Controller)
validating: SupportsArtifactValidation = Controller.__new__(Controller)
"""

BROKEN = {
    # create_provider must take the setup
    "create_provider(self)": PLUGIN.replace(
        "def create_provider(self, setup: ProviderSetup) -> Controller:\n        return Controller(setup)",
        "def create_provider(self) -> Controller:\n        return Controller.__new__(Controller)",
    ),
    # validate_artifact answers a bool, not a string
    "validate_artifact -> str": PLUGIN.replace(
        "def validate_artifact(self, ref: Mapping[str, JsonValue]) -> bool:\n"
        '        return ref.get("kind") == "acmeImage"',
        'def validate_artifact(self, ref: Mapping[str, JsonValue]) -> str:\n        return "yes"',
    ),
    # a controller without runtime(context) is not a controller
    "no runtime": PLUGIN.replace("def runtime(", "def make_runtime("),
}


def _mypy(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / f"{name}.py"
    module.write_text(textwrap.dedent(source))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy"),
            str(module),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.timeout(600)
def test_mypy_accepts_a_plugin_that_keeps_the_contract_and_rejects_one_that_breaks_it(tmp_path: Path) -> None:
    good = _mypy(tmp_path, "acme_provider", PLUGIN)
    assert good.returncode == 0, good.stdout + good.stderr
    for what, source in BROKEN.items():
        assert source != PLUGIN, what
        broken = _mypy(tmp_path, "acme_broken", source)
        assert broken.returncode == 1, f"{what}: {broken.stdout}{broken.stderr}"
        assert "acme_broken.py" in broken.stdout and "error:" in broken.stdout, what
