"""Loading the docker client hides httpx's optional imports from it alone, never from handlers."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import importlib.util, json, sys
import providers.docker.client
import httpx
report = {
    "trio_loaded": "trio" in sys.modules,
    "trio_installed": importlib.util.find_spec("trio") is not None,
    "cli_loaded": any(name in sys.modules for name in ("rich", "click")),
}
if report["trio_installed"]:
    import trio
    report["trio_usable"] = callable(trio.run)
print(json.dumps(report))
"""


def test_the_client_loads_without_trio_or_httpx_cli_and_leaves_trio_importable() -> None:
    completed = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    report = json.loads(completed.stdout)
    assert report["trio_loaded"] is False
    assert report["cli_loaded"] is False
    if report["trio_installed"]:
        assert report["trio_usable"] is True
