"""Containers' live states as one daemon reports them: the probe behind ``rig ls`` (both of its ways).

The probe asks the daemon once for every container of this project (by the ``rig.project``
label) and looks up by name or id only what that list lacks, so ``rig ls`` of fifty workspaces
costs one request. It speaks on the controller's own connection (``rawhttp``: no httpx to
import). A container the daemon says does not exist is ``missing``; one made on another daemon,
or a daemon that does not answer, is ``unknown`` with why. States are plain ``(state, detail)``
pairs and this imports no typing: ``rig ls`` answered from the cache (``direct_status``) probes with it too.
"""

from __future__ import annotations

from providers.docker.endpoint import container_of
from providers.docker.rawhttp import RawClient
from rigcli.errors import ProviderError
from rigcli.speed.json_lite import string
from rigcli.timeouts import Bound, check_bound

# Not typing.TYPE_CHECKING: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from rigcli.provider_api import EffectEntry

PROBE_TIMEOUT = 2.0  # seconds for each request of a probe at most: rig ls waits no longer than this anyway
# Docker's container states as rig shows them: a paused container runs nothing either.
STATES: Mapping[str, str] = {
    "running": "running",
    "restarting": "running",
    "paused": "stopped",
    "exited": "stopped",
    "created": "stopped",
    "dead": "stopped",
}


def _status(state: str, status_text: str) -> tuple[str, str]:
    live = STATES.get(state)
    detail = "paused" if state == "paused" else (status_text or state).strip()  # "Exited (137) 5 minutes ago"
    if live is None:  # "removing": on its way out, not yet gone
        return ("unknown", detail)
    return (live, detail)


def container_states(raw: RawClient, project_dir: str, resources: Sequence[EffectEntry]) -> dict[str, tuple[str, str]]:
    """Each container among ``resources`` as the daemon sees it (images and other kinds are left out)."""
    answers: dict[str, tuple[str, str]] = {}
    wanted: dict[str, str] = {}  # effect id -> container id or name
    for resource in resources:
        if resource["kind"] != "container":
            continue
        try:
            wanted[resource["id"]] = container_of(raw.endpoint.host, resource)
        except ProviderError as exc:
            answers[resource["id"]] = ("unknown", str(exc))
    if not wanted:
        return answers
    filters = '{"label": [' + string(f"rig.project={project_dir}") + "]}"  # json.dumps({"label": [...]})
    bound = probe_bound()
    response = raw.request("GET", "/containers/json", params={"all": "true", "filters": filters}, bound=bound)
    if response.status != 200:
        raise ProviderError(f"Docker container list failed: {response.message()} (HTTP {response.status})")
    listed: list[dict[str, Any]] = response.json()
    by_key: dict[str, dict[str, Any]] = {}
    for item in listed:
        by_key[str(item.get("Id"))] = item
        for name in item.get("Names") or []:
            by_key[str(name).lstrip("/")] = item
    for effect_id, container in wanted.items():
        found = by_key.get(container) or by_key.get(effect_id)
        if found is not None:
            answers[effect_id] = _status(str(found.get("State") or ""), str(found.get("Status") or ""))
        else:  # labelled for another project path (a moved project), or gone: ask for it by name
            answers[effect_id] = _inspect(raw, container, bound)
    return answers


def probe_bound() -> Bound:
    """Each request of a probe: RIG_CHECK_TIMEOUT, at most PROBE_TIMEOUT."""
    return check_bound().at_most(PROBE_TIMEOUT)


def _inspect(raw: RawClient, container: str, bound: Bound) -> tuple[str, str]:
    response = raw.request("GET", f"/containers/{container}/json", bound=bound)
    if response.status == 404:
        return ("missing", f"container {container[:12]} is gone")
    if response.status != 200:
        raise ProviderError(f"Docker container inspect failed: {response.message()} (HTTP {response.status})")
    state = response.json().get("State") or {}
    return _status(str(state.get("Status") or ""), str(state.get("Status") or ""))


__all__ = ["PROBE_TIMEOUT", "STATES", "container_states", "probe_bound"]
