"""Docker CLI contexts: which one is current, and the endpoint and TLS material the context store holds for it.

As the docker CLI orders them, a context is used only when neither the provider's ``host`` nor
``DOCKER_HOST`` names a daemon: then ``DOCKER_CONTEXT``, else ``currentContext`` in
``$DOCKER_CONFIG/config.json`` (``~/.docker`` by default). The context ``default`` means the
environment's own defaults. A context's endpoint is ``contexts/meta/<sha256 of its name>/meta.json``
(``Endpoints.docker.Host``) and its TLS material ``contexts/tls/<sha256>/docker/{ca,cert,key}.pem``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from rigcli.errors import ProviderError

DEFAULT = "default"


class DockerContext:
    """A context from the store: its name, where it was chosen, its daemon and TLS folder."""

    __slots__ = ("host", "name", "skip_tls_verify", "source", "tls_dir")

    def __init__(self, name: str, source: str, host: str, tls_dir: str | None, skip_tls_verify: bool = False) -> None:
        self.name = name
        self.source = source  # "DOCKER_CONTEXT" or the config.json path that names it
        self.host = host
        self.tls_dir = tls_dir  # holds ca.pem, cert.pem and key.pem when the context uses TLS
        self.skip_tls_verify = skip_tls_verify


def config_dir(env: Mapping[str, str]) -> Path:
    """``$DOCKER_CONFIG``, else ``~/.docker``: where config.json and the context store live."""
    configured = env.get("DOCKER_CONFIG")
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME")
    return Path(home) / ".docker" if home else Path("~/.docker").expanduser()


def chosen_context(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The context the docker CLI would use and what chose it, or None for the default."""
    named = env.get("DOCKER_CONTEXT", "").strip()
    if named:
        return None if named == DEFAULT else (named, "DOCKER_CONTEXT")
    path = config_dir(env) / "config.json"
    try:
        current = json.loads(path.read_text(encoding="utf-8")).get("currentContext")
    except (OSError, ValueError, AttributeError):
        return None  # no config.json (or not one the CLI could read either): the default context
    if isinstance(current, str) and current.strip() and current.strip() != DEFAULT:
        return current.strip(), str(path)
    return None


def load_context(name: str, source: str, env: Mapping[str, str]) -> DockerContext:
    """The context ``name`` from the store; ProviderError saying where rig looked when it is not there."""
    from rigcli.speed.digests import sha256  # only a context needs it

    store = config_dir(env) / "contexts"
    digest = sha256(name.encode()).hexdigest()
    meta_path = store / "meta" / digest / "meta.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProviderError(
            f'Docker context "{name}" (named by {source}) does not exist: no {meta_path}; '
            "list them with `docker context ls`"
        ) from None
    except (OSError, ValueError) as exc:
        raise ProviderError(f'Docker context "{name}" cannot be read from {meta_path}: {exc}') from None
    endpoint = ((meta.get("Endpoints") or {}).get("docker") or {}) if isinstance(meta, dict) else {}
    host = endpoint.get("Host") if isinstance(endpoint, dict) else None
    if not isinstance(host, str) or not host:
        raise ProviderError(f'Docker context "{name}" has no docker endpoint host in {meta_path}')
    tls = store / "tls" / digest / "docker"
    has_tls = tls.is_dir() and any((tls / item).is_file() for item in ("ca.pem", "cert.pem", "key.pem"))
    skip = bool(endpoint.get("SkipTLSVerify"))
    return DockerContext(name, source, host, str(tls) if has_tls else None, skip)


def current(env: Mapping[str, str] | None = None) -> DockerContext | None:
    """The context in effect when no ``host`` and no ``DOCKER_HOST`` is given, or None (the default)."""
    environ = os.environ if env is None else env
    chosen = chosen_context(environ)
    return None if chosen is None else load_context(*chosen, environ)


__all__ = ["DEFAULT", "DockerContext", "chosen_context", "config_dir", "current", "load_context"]
