"""Whether a registry holds a manifest, asked with the standard library: a plan's question, without httpx.

A plan (a fork's too) asks the registry of every shared snapshot whether its manifest is still
there; the rest of the registry client (``registry.py``: digests, labels, deletions, listings) is
httpx, whose import would be most of what that one question costs. Asked as that client asks:
``HEAD`` with the Accept header of every manifest type a Docker Engine pushes, through the
environment's proxies as usual (never to a registry on loopback), HTTPS verified. One bound
covers connecting and each read (a plan's is RIG_CHECK_TIMEOUT, shorter than RIG_CONNECT_TIMEOUT).
A registry that ran out of a bound is not asked again, by this process for SILENCE_STANDS seconds,
anything it would have as long or less to answer, whichever of the two ways asked: the memory is
kept here for both.
"""

from __future__ import annotations

from time import monotonic

from providers.docker.registry_name import Registry, is_loopback
from rigcli.errors import ProviderError, UnreachableError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import Bound, connect_bound

TYPE_CHECKING = False  # not typing's: read on the way of a plan answered from the cache (mypy reads it as True)
if TYPE_CHECKING:
    import http.client as http_client
    import urllib.error as urllib_error
    import urllib.request as urllib_request
else:
    http_client = lazy_module("http.client")
    urllib_error = lazy_module("urllib.error")
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
    request = urllib_request.Request(registry.url + path, method="HEAD", headers=ACCEPT)
    # This machine's own registry is never asked through a proxy (as the registry client does).
    handlers = [urllib_request.ProxyHandler({})] if is_loopback(registry.name) else []
    try:
        with urllib_request.build_opener(*handlers).open(request, timeout=seconds) as response:
            status = int(response.status)
    except urllib_error.HTTPError as exc:
        status = exc.code
    except urllib_error.URLError as exc:  # before an answer began: connecting, a handshake, sending
        if isinstance(exc.reason, TimeoutError):
            raise silent(registry.url, f"no connection within {connecting}", bound) from None
        reason = " ".join(str(exc.reason).split()) or type(exc.reason).__name__
        raise UnreachableError(f"Cannot reach the registry at {registry.url}: {reason}") from None
    except TimeoutError:
        raise silent(registry.url, f"no answer to HEAD {path} within {bound}", bound) from None
    except (OSError, http_client.HTTPException) as exc:  # a connection closed mid-answer, a garbled one
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise UnreachableError(f"Cannot reach the registry at {registry.url}: {reason}") from None
    if status == 404:
        return False
    if status != 200:
        raise ProviderError(
            f"Registry {registry.name}: manifest lookup of {repository}:{reference} failed (HTTP {status})"
        )
    return True


__all__ = ["ACCEPT", "MANIFEST_TYPES", "SILENCE_STANDS", "manifest_exists", "refuse_if_silent", "silent"]
