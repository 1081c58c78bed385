"""Which daemon to talk to and how: host, TLS and ssh settings, from provider config, DOCKER_* or a docker
context, in the docker CLI's order: ``host``, then ``DOCKER_HOST``, then ``DOCKER_CONTEXT`` or the current
context (contexts.py), then the default socket."""

from __future__ import annotations

import os
from collections.abc import Mapping

from rigcli.errors import ProviderError
from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache imports neither typing nor dataclasses
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:  # only a TLS endpoint loads ssl (ssl_context)
    from typing import Any

    from rigcli.provider_api import EffectEntry

if TYPE_CHECKING:
    import ssl
    import urllib.parse as urllib_parse
else:
    urllib_parse = lazy_module("urllib.parse")
    ssl = lazy_module("ssl")


DEFAULT_HOST = "unix:///var/run/docker.sock"
TLS_PORT, PLAIN_PORT = 2376, 2375  # the docker CLI's defaults for a tcp:// host without a port
CERT_FILES = ("ca.pem", "cert.pem", "key.pem")


class Endpoint:
    """A resolved daemon address: ``host`` is normalised and is what identifies the daemon. Immutable,
    compared by value (a plain class: its dataclass would load dataclasses on a cached command's path)."""

    __slots__ = ("cert_path", "context", "host", "mode")
    host: str
    mode: str  # "unix" | "tls" | "tcp" (no TLS) | "ssh"
    cert_path: str | None  # TLS only: the folder with ca.pem, cert.pem and key.pem
    context: str | None  # the docker context it came from (None: config, DOCKER_HOST or the default)

    def __init__(self, host: str, mode: str, cert_path: str | None = None, context: str | None = None) -> None:
        for name, value in (("host", host), ("mode", mode), ("cert_path", cert_path), ("context", context)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Endpoint is immutable: cannot set {name}")

    def _key(self) -> tuple[str, str, str | None, str | None]:
        return (self.host, self.mode, self.cert_path, self.context)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Endpoint) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Endpoint(host={self.host!r}, mode={self.mode!r}, cert_path={self.cert_path!r}, context={self.context!r})"
        )

    @property
    def label(self) -> str:
        """The transport in a few words, for doctor, checks and messages."""
        return {
            "unix": "unix socket",
            "tls": f"tcp with mutual TLS (certificates in {self.cert_path})",
            "tcp": "tcp without TLS (unauthenticated)",
            "ssh": "ssh (docker system dial-stdio on the remote host)",
        }[self.mode]

    @property
    def mode_label(self) -> str:
        return {"unix": "unix socket", "tls": "TLS", "tcp": "no TLS, unauthenticated", "ssh": "ssh"}[self.mode]

    @property
    def warning(self) -> str | None:
        if self.mode != "tcp":
            return None
        return (
            f"The Docker daemon at {self.host} is reached without TLS: it is unauthenticated and anyone who can "
            "reach that port controls its host. Set tls_verify=True and cert_path (or DOCKER_TLS_VERIFY and "
            "DOCKER_CERT_PATH)."
        )

    @property
    def socket_path(self) -> str:
        return self.host[len("unix://") :]

    @property
    def base_url(self) -> str:
        """What httpx is given; unix and ssh connections ignore the authority."""
        if self.mode == "tls":
            return "https://" + self.host[len("tcp://") :]
        if self.mode == "tcp":
            return "http://" + self.host[len("tcp://") :]
        return "http://docker"

    def cert_file(self, name: str) -> str:
        return os.path.join(self.cert_path or ".", name)

    def ssl_context(self) -> ssl.SSLContext:
        """Verify the daemon against ``ca.pem`` and present ``cert.pem``/``key.pem``, as ``docker --tlsverify`` does."""

        missing = [name for name in CERT_FILES if not os.path.isfile(self.cert_file(name))]
        if missing:
            raise ProviderError(
                f"Cannot reach the Docker daemon at {self.host}: TLS certificate files missing: no "
                f"{', '.join(missing)} in {self.cert_path} (set cert_path= or DOCKER_CERT_PATH)"
            )
        try:
            context = ssl.create_default_context(cafile=self.cert_file("ca.pem"))
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise self._bad_file("ca.pem", exc) from None
        try:
            context.load_cert_chain(self.cert_file("cert.pem"), self.cert_file("key.pem"))
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise self._bad_file("cert.pem/key.pem", exc) from None
        return context

    def _bad_file(self, name: str, exc: Exception) -> ProviderError:
        reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        return ProviderError(
            f"Cannot reach the Docker daemon at {self.host}: certificate problem: cannot load {name} from "
            f"{self.cert_path} ({reason})"
        )


def resolve_endpoint(config: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Endpoint:
    """The endpoint from config ``host``/``tls_verify``/``cert_path``, each falling back to its DOCKER_*
    variable; with neither ``host`` nor ``DOCKER_HOST``, the docker context in effect (if not the default)."""
    env = os.environ if environ is None else environ
    configured_tls = _flag(config, "tls_verify")
    host = _option(config, "host", str) or env.get("DOCKER_HOST")
    # The context store (and pathlib, json with it) only when neither config nor DOCKER_HOST names a host:
    # rig exec answered from the cache, on a DOCKER_HOST daemon, imports neither.
    context = None
    if not host:
        from providers.docker import contexts

        context = contexts.current(env)
    if context is not None:
        if context.skip_tls_verify and configured_tls is None:
            raise ProviderError(
                f'Docker context "{context.name}" skips verifying the daemon\'s certificate (SkipTLSVerify); '
                "rig always verifies it: give the context a CA, or set tls_verify and cert_path"
            )
        tls = configured_tls if configured_tls is not None else context.tls_dir is not None
        cert_path = _option(config, "cert_path", str) or context.tls_dir or "~/.docker"
        found = _endpoint(context.host, tls, cert_path)
        return Endpoint(found.host, found.mode, found.cert_path, context.name)
    # Like the docker CLI: any non-empty DOCKER_TLS_VERIFY turns verification on (even "0").
    tls = configured_tls if configured_tls is not None else bool(env.get("DOCKER_TLS_VERIFY"))
    cert_path = _option(config, "cert_path", str) or env.get("DOCKER_CERT_PATH") or "~/.docker"
    return _endpoint(host or DEFAULT_HOST, tls, cert_path)


def container_of(daemon: str, resource: EffectEntry) -> str:
    """The container's id (or name, before its create was confirmed) on the daemon at host ``daemon``;
    ProviderError for another daemon's."""
    details = resource["resource"]
    host = details.get("host")
    if isinstance(host, str) and host and host != daemon:
        raise ProviderError(f"container {resource['id']} was made on the daemon at {host}, not {daemon}")
    return str(details.get("container_id") or details.get("machine_id") or resource["id"])


def _endpoint(host: str, tls: bool, cert_path: str) -> Endpoint:
    scheme, sep, rest = host.partition("://")
    if not sep:
        raise _unsupported(host)
    if scheme == "unix":
        if not rest.startswith("/"):
            raise ProviderError(f"Docker host {host} needs an absolute socket path (unix:///path/to/docker.sock)")
        return Endpoint(host, "unix")
    if scheme in ("tcp", "http"):
        return _tcp(host, rest, tls, os.path.expanduser(cert_path))
    if scheme == "ssh":
        return Endpoint(_ssh_host(host), "ssh")
    raise _unsupported(host)


def _option(config: Mapping[str, Any], key: str, kind: type) -> Any:
    value = config.get(key)
    if value is None or (kind is str and value == ""):
        return None
    if not isinstance(value, kind):
        raise ProviderError(f"docker provider config {key}= must be a {kind.__name__}, not {value!r}")
    return value


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _flag(config: Mapping[str, Any], key: str) -> bool | None:
    """A bool, or its spelling in a string (so ``env("BUILD_TLS_VERIFY", "")`` works); empty means unset."""
    value = config.get(key)
    if isinstance(value, str):
        if not value.strip():
            return None
        if value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
    if value is None or isinstance(value, bool):
        return value
    raise ProviderError(f"docker provider config {key}= must be True or False, not {value!r}")


def _unsupported(host: str) -> ProviderError:
    return ProviderError(
        f"Docker host {host} is not supported by the docker provider "
        "(use unix:///path, tcp://host:port or ssh://user@host[:port])"
    )


def _tcp(host: str, rest: str, tls: bool, cert_path: str) -> Endpoint:
    address = rest.rstrip("/")
    if not address or "/" in address:
        raise ProviderError(f"Docker host {host} must be tcp://host[:port]")

    try:
        port = urllib_parse.urlsplit(f"//{address}").port
    except ValueError:
        raise ProviderError(f"Docker host {host} has an invalid port") from None
    if port is None:
        address = f"{address}:{TLS_PORT if tls else PLAIN_PORT}"
    if tls:
        return Endpoint(f"tcp://{address}", "tls", cert_path)
    return Endpoint(f"tcp://{address}", "tcp")


def _ssh_host(host: str) -> str:

    parts = urllib_parse.urlsplit(host)
    try:
        parts.port  # noqa: B018 - validates the port
    except ValueError:
        raise ProviderError(f"Docker host {host} has an invalid port") from None
    if not parts.hostname or parts.password is not None or parts.query or parts.fragment:
        raise ProviderError(f"Docker host {host} must be ssh://[user@]host[:port]")
    if parts.path not in ("", "/"):
        raise ProviderError(f"Docker host {host} has a path after the host; use ssh://[user@]host[:port]")
    return f"ssh://{parts.netloc}"


__all__ = ["CERT_FILES", "DEFAULT_HOST", "Endpoint", "container_of", "resolve_endpoint"]
