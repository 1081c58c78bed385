"""A project a team shares through one PostgreSQL state (see .env and README.md).

The tasks are plain Python (no provider), so every clone can reuse what any other clone or CI
ran: their cache keys depend on the code and configuration, never on the path, host or user.
"""

import getpass
import hashlib
import socket
from pathlib import Path

from rigcli import workflow

app = workflow("team")
HERE = Path(__file__).parent


def toolchain(step):
    print("resolving the toolchain (the slow part a teammate or CI already did)")
    return {"ctx": {"python": "3.12", "node": "22"}}


def dependencies(step):
    lock = hashlib.sha256((HERE / "rig_config.py").read_bytes()).hexdigest()[:12]
    return {"ctx": {**step.ctx, "deps": f"locked-{lock}"}}


def create(workflow, workspace):
    # The record also gets owner=user@host from rig itself; this is what the workspace holds.
    return {"name": workspace.name, "for": f"{getpass.getuser()}@{socket.gethostname()}", **workflow.ctx}


def whoami(workspace):
    return {"workspace": workspace.name, "ctx": workspace.ctx}


workflows = (
    app.sequence("team")
    .task("toolchain", toolchain)
    .task("dependencies", dependencies)
    .workspace(create=create)
    .workspace_operation("whoami", run=whoami, description="what this workspace was made with")
)
