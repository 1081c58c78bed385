"""``rig shell``/``rig exec`` from the provider's config alone: no controller, no storage, no httpx.

``rig shell``/``rig exec`` in a plain case (``SupportsDirectAttach``) hand over a definition's resolved config and the
workspace's journaled container; this resolves the endpoint as the controller would
(``resolve_endpoint``: config, then DOCKER_*, then the docker context), creates the exec and, only
once the daemon has accepted it, runs it as ``attach`` does. Anything before that — another
daemon's container, one not running or gone, a daemon that does not answer, a config the
controller would refuse — is None: nothing was started, and the ordinary way answers in its words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from providers.docker.attach import create_exec, journal_session, journaled_exec, run_exec
from providers.docker.endpoint import container_of, resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import RigError

# Not typing.TYPE_CHECKING: this path imports no typing (rigcli/__init__.py); mypy treats any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from rigcli.provider_api import EffectEntry, EffectJournal


def attach_directly(
    config: Mapping[str, Any],
    resource: EffectEntry,
    argv: Sequence[str] | None,
    *,
    tty: bool,
    env: Mapping[str, str],
    effects: EffectJournal,
) -> int | None:
    """Run ``argv`` (None: a login shell) in the container on rig's stdio; None if it cannot start here."""
    if resource["kind"] != "container" or not isinstance(resource["resource"], Mapping):
        return None
    configured = config.get("env") or {}
    if not isinstance(configured, Mapping):
        return None  # the controller refuses such a config: let it say so
    try:
        endpoint = resolve_endpoint(config)
        container = container_of(endpoint.host, resource)
        raw = RawClient(endpoint)
    except RigError:
        return None
    try:
        user, defaults, workdir = journaled_exec(resource["resource"])
        full = {**{str(key): str(value) for key, value in configured.items()}, **defaults, **env}
        try:
            session = journal_session(effects, raw, container)
        except RigError:
            return None  # the full way journals through the store, or says why it cannot
        try:
            created, mark = create_exec(
                raw, container, argv, tty=tty, env=full, cwd=workdir, user=user, session=session
            )
        except RigError:
            effects.deleted(session)
            return None
        if created.status != 201:
            effects.deleted(session)
            return None
        return run_exec(raw, container, str(created.json()["Id"]), mark, tty=tty, effects=effects, session=session)
    finally:
        raw.close()


__all__ = ["attach_directly"]
