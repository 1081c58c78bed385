"""``rig shell``/``rig exec`` on a local machine: the program run on the host in the machine's directory.

One way for both the controller's ``attach`` (a load's) and the plugin's ``attach_directly`` (a plain
case answered from rig's cache): the machine is ``<state dir>/machines/<id>`` (``layout.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from providers.local.layout import PROVIDER_ID, machine_dir
from rigcli.errors import ProviderError
from rigcli.provider_kit.host_program import run_attached
from rigcli.provider_kit.runtime import config_env


def login_shell() -> list[str]:
    """The user's own shell (``$SHELL``), else ``sh``."""
    return [os.environ.get("SHELL") or "/bin/sh"]


def attach_in(
    state_dir: str,
    config: Mapping[str, object],
    machine_id: str,
    argv: Sequence[str] | None,
    *,
    env: Mapping[str, str],
    cwd: str | None,
) -> int:
    """Run ``argv`` (or ``$SHELL``) on the host in the machine's directory, with its environment; its exit code."""
    path = machine_dir(state_dir, machine_id)
    if path is None:
        raise ProviderError(f"{machine_id!r} is not a local machine id")
    if not os.path.isdir(path):
        raise ProviderError(f"Local machine {machine_id} is gone (no directory at {path})")
    workdir = os.path.join(path, cwd) if cwd else path
    if not os.path.isdir(workdir):
        raise ProviderError(f"Working directory {workdir} does not exist in local machine {machine_id}")
    full = dict(os.environ)
    full.update({str(key): str(value) for key, value in config_env(PROVIDER_ID, config).items()})
    full.update({"RIG_MACHINE_ID": machine_id, "RIG_MACHINE_DIR": path, **env})
    return run_attached(list(argv) if argv else login_shell(), cwd=workdir, env=full)


__all__ = ["attach_in", "login_shell"]
