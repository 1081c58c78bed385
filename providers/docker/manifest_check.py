"""Whether a registry holds a manifest, asked without httpx: a plan's question.

A plan (a fork's too) asks the registry of every shared snapshot whether its manifest is still
there; the rest of the registry client (``registry.py``: digests, labels, deletions, listings) is
httpx, whose import would be most of what that one question costs. Asked as that client asks:
``HEAD`` with the Accept header of every manifest type a Docker Engine pushes. A registry on this
machine speaking plain HTTP (never asked through a proxy) is asked over a socket of our own, as
the daemon is (``rawhttp``): urllib and the email parser it brings would be a tenth of a fork's
own time. Any other goes through urllib, through the environment's proxies as usual, HTTPS
verified. One bound covers connecting and each read (a plan's is RIG_CHECK_TIMEOUT, shorter
than RIG_CONNECT_TIMEOUT).
A registry that ran out of a bound is not asked again, by this process for SILENCE_STANDS seconds,
anything it would have as long or less to answer, whichever of the two ways asked: the memory is
kept here for both.
"""

from __future__ import annotations

from time import monotonic

from providers.docker.connection import SocketConnection
from providers.docker.rawhttp import Reader
from providers.docker.registry_name import Registry, is_loopback
from rigcli.errors import ProviderError, UnreachableError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import Bound, connect_bound

TYPE_CHECKING = False  # not typing's: read on the way of a plan answered from the cache (mypy reads it as True)
if TYPE_CHECKING:
    import http.client as http_client
    import socket
    import urllib.error as urllib_error
    import urllib.parse as urllib_parse
    import urllib.request as urllib_request
else:
    http_client = lazy_module("http.client")
    socket = lazy_module("socket")
    urllib_error = lazy_module("urllib.error")
    urllib_parse = lazy_module("urllib.parse")
    urllib_request = lazy_module("urllib.request")

MANIFEST_TYPES = (
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
)
ACCEPT = {"Accept": ", ".join(MANIFEST_TYPES)}
SILENCE_STANDS = 30.0  # seconds: one command's questions come within it; a long-lived process asks again later
# By registry URL: the longest bound it ran out of, that error, and until when it stands.
_SILENT: dict[str, tuple[float, UnreachableError, float]] = {}


def refuse_if_silent(url: str, reading: Bound) -> None:
    """Raise the remembered error of a registry that ran out of a bound at least as long as ``reading``."""
    known = _SILENT.get(url)
    if known is not None and reading.seconds <= known[0] and monotonic() < known[2]:
        raise known[1]


def silent(url: str, what: str, reading: Bound) -> UnreachableError:
    """The error of a registry that ran out of ``reading`` (``what`` says how), remembered for later questions."""
    error = UnreachableError(f"Cannot reach the registry at {url}: {what}")
    known = _SILENT.get(url)
    if known is None or known[0] < reading.seconds or known[2] < monotonic():
        _SILENT[url] = (reading.seconds, error, monotonic() + SILENCE_STANDS)
    return error


def manifest_exists(registry: Registry, repository: str, reference: str, *, bound: Bound) -> bool:
    """Whether ``repository`` in ``registry`` has a manifest named ``reference`` (a tag or digest).

    A registry that does not answer, or cannot be reached, is an UnreachableError naming it (never
    "no"); any answer but 200 or 404 is a ProviderError."""
    refuse_if_silent(registry.url, bound)
    connecting = connect_bound()
    connecting = bound if bound.seconds < connecting.seconds else connecting
    seconds = min(bound.seconds, connecting.seconds)  # urllib has one timeout for both
    path = f"/v2/{repository}/manifests/{reference}"
    if registry.scheme == "http" and is_loopback(registry.name):
        status = _status_here(registry, path, seconds, connecting, bound)
    else:
        status = _status_through_urllib(registry, path, seconds, connecting, bound)
    if status == 404:
        return False
    if status != 200:
        raise ProviderError(
            f"Registry {registry.name}: manifest lookup of {repository}:{reference} failed (HTTP {status})"
        )
    return True


def _status_here(registry: Registry, path: str, seconds: float, connecting: Bound, bound: Bound) -> int:
    """The status of ``HEAD path`` to a plain-HTTP registry on this machine, over a socket of our own."""
    address = urllib_parse.urlsplit(registry.url)
    host = address.hostname or "localhost"
    try:
        sock = socket.create_connection((host, address.port or 80), timeout=seconds)
    except TimeoutError:
        raise silent(registry.url, f"no connection within {connecting}", bound) from None
    except OSError as exc:
        raise _unreachable(registry, exc) from None
    accept = ACCEPT["Accept"]
    request = f"HEAD {path} HTTP/1.1\r\nHost: {registry.name}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    try:
        with sock:
            sock.sendall(request.encode("latin-1"))
            status, _ = Reader(SocketConnection(sock)).head()
    except TimeoutError:
        raise silent(registry.url, f"no answer to HEAD {path} within {bound}", bound) from None
    except (OSError, ValueError, IndexError) as exc:  # closed mid-answer (ConnectionError), or garbled
        raise _unreachable(registry, exc) from None
    return status


def _status_through_urllib(registry: Registry, path: str, seconds: float, connecting: Bound, bound: Bound) -> int:
    """The status of ``HEAD path`` through urllib: the environment's proxies, HTTPS verified."""
    request = urllib_request.Request(registry.url + path, method="HEAD", headers=ACCEPT)
    # This machine's own registry is never asked through a proxy (as the registry client does).
    handlers = [urllib_request.ProxyHandler({})] if is_loopback(registry.name) else []
    try:
        with urllib_request.build_opener(*handlers).open(request, timeout=seconds) as response:
            return int(response.status)
    except urllib_error.HTTPError as exc:
        return int(exc.code)
    except urllib_error.URLError as exc:  # before an answer began: connecting, a handshake, sending
        if isinstance(exc.reason, TimeoutError):
            raise silent(registry.url, f"no connection within {connecting}", bound) from None
        reason = exc.reason if isinstance(exc.reason, BaseException) else OSError(str(exc.reason))
        raise _unreachable(registry, reason) from None
    except TimeoutError:
        raise silent(registry.url, f"no answer to HEAD {path} within {bound}", bound) from None
    except (OSError, http_client.HTTPException) as exc:  # a connection closed mid-answer, a garbled one
        raise _unreachable(registry, exc) from None


def _unreachable(registry: Registry, exc: BaseException) -> UnreachableError:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return UnreachableError(f"Cannot reach the registry at {registry.url}: {reason}")


__all__ = ["ACCEPT", "MANIFEST_TYPES", "SILENCE_STANDS", "manifest_exists", "refuse_if_silent", "silent"]
