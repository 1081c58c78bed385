"""The docker provider loads httpx only when a request needs it, and hides httpx's optional imports
from that load alone, never from handlers."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import importlib.util, json, sys
import providers.docker.client
providers.docker.client.DockerClient("unix:///nonexistent/docker.sock")._http()  # its first request loads httpx
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


_LEAN = """
import json, sys
already = set(sys.modules)  # what the interpreter's start loaded (a site .pth may import tempfile) is not ours
import providers.docker
from providers.docker.rawhttp import RawClient
heavy = ("httpx", "httpcore", "anyio", "h11", "ssl", "concurrent.futures", "tempfile")
print(json.dumps(sorted(name for name in heavy if name in sys.modules and name not in already)))
"""


def test_the_provider_and_its_raw_client_load_without_httpx() -> None:
    """Live status and shell/exec speak on rig's own connections: no httpx for them, and no ssl (TLS
    endpoints only), no thread pool or temporary files (ssh endpoints only)."""
    completed = subprocess.run([sys.executable, "-c", _LEAN], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == []


_PLAN_AND_PROBE = """
import json, sys
already = set(sys.modules)
import providers.docker
from providers.docker import controller, lifecycle  # what a plan's check and rig ls's probe load
making = ("providers.docker.client", "providers.docker.effects", "providers.docker.execution",
          "providers.docker.machine", "providers.docker.idle", "providers.docker.diagnose", "secrets")
loaded = sorted(name for name in making if name in sys.modules and name not in already)
machine = providers.docker.DockerMachine  # still importable by name, loaded on first use
print(json.dumps({"loaded": loaded, "machine": machine.__module__}))
"""


def test_the_provider_loads_what_only_making_and_removing_need_on_first_use() -> None:
    """A plan's check, ``rig ls``'s probe and ``rig exec`` use the controller's own connection:
    the httpx client, the effects and machine code and ``secrets`` load only when something is made
    or removed."""
    completed = subprocess.run([sys.executable, "-c", _PLAN_AND_PROBE], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout) == {"loaded": [], "machine": "providers.docker.machine"}
