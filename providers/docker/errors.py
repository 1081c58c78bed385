"""One-line errors for an unreachable daemon: which endpoint, and what failed (TLS, certificate, ssh, network)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from providers.docker.endpoint import Endpoint
from rigcli.errors import ProviderError, UnreachableError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import Bound

TYPE_CHECKING = False  # not typing's: read on the way of a command answered from the cache (mypy reads it as True)
if TYPE_CHECKING:
    import ssl
else:
    ssl = lazy_module("ssl")


# OpenSSL reasons meaning the daemon refused our client certificate (TLS 1.2 and 1.3 spellings).
_REFUSED_CLIENT_CERT = ("ALERT_BAD_CERTIFICATE", "ALERT_UNKNOWN_CA", "CERTIFICATE_REQUIRED", "ALERT_CERTIFICATE")
_NOT_TLS = ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNEXPECTED_EOF")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def one_line(text: str) -> str:
    return " ".join(text.split())


def out_of_time(endpoint: Endpoint, what: str, bound: Bound) -> UnreachableError:
    """The error for a wait on the daemon that ran out of its bound: ``what`` did not come within it."""
    return UnreachableError(f"Cannot reach the Docker daemon at {endpoint.host}: {what} within {bound}")


def transport_error(endpoint: Endpoint, exc: BaseException, what: str) -> UnreachableError:
    """The error for a request that never got an answer: names the endpoint and the failing layer."""

    # Only an ssh endpoint loads the ssh module (and httpx with it); without it, no cause is its error.
    ssh = sys.modules.get("providers.docker.ssh")
    at = f"Cannot reach the Docker daemon at {endpoint.host}"
    for cause in _causes(exc):
        if ssh is not None and isinstance(cause, ssh.SshConnectionError):
            return UnreachableError(one_line(str(cause)))
        if isinstance(cause, UnreachableError):
            return cause
        if isinstance(cause, ProviderError):
            return UnreachableError(str(cause))
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or cause.reason or str(cause)
            return UnreachableError(
                f"{at}: certificate check failed: the daemon's certificate does not verify against "
                f"{endpoint.cert_file('ca.pem')} ({reason})"
            )
        if isinstance(cause, ssl.SSLError):
            reason = str(cause.reason or cause)
            if any(marker in reason for marker in _REFUSED_CLIENT_CERT):
                return UnreachableError(
                    f"{at}: TLS handshake failed: the daemon refused the client certificate "
                    f"{endpoint.cert_file('cert.pem')} ({reason})"
                )
            if any(marker in reason for marker in _NOT_TLS):
                return UnreachableError(
                    f"{at}: TLS handshake failed: nothing speaking TLS answered there ({reason}); "
                    "if the daemon really listens without TLS, set tls_verify=False"
                )
            return UnreachableError(f"{at}: TLS handshake failed ({reason})")
    reason = one_line(str(exc)) or type(exc).__name__
    if _is_connect_failure(exc):
        hint = "is dockerd running?" if endpoint.mode == "unix" else "is the host up and dockerd listening there?"
        return UnreachableError(f"{at}: unreachable ({reason}); {hint}")
    return UnreachableError(f"Docker request {what} to {endpoint.host} failed: {reason}")


def _is_connect_failure(exc: BaseException) -> bool:
    httpx = sys.modules.get("httpx")  # not loaded: the failure cannot be one of its errors
    if httpx is not None and isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return True
    return any(isinstance(cause, (FileNotFoundError, ConnectionRefusedError)) for cause in _causes(exc))


__all__ = ["one_line", "out_of_time", "transport_error"]
