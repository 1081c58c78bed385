"""A small Docker Engine API client over httpx: unix, tcp+TLS and ssh endpoints, version negotiation, clear errors.

Every request is bounded (``rigcli/timeouts.py``): connecting (and a TLS handshake) by
RIG_CONNECT_TIMEOUT, each read of the answer by the request's bound — the client's own
(RIG_READ_TIMEOUT unless it was made with another), or the one a request names (RIG_LONG_TIMEOUT
for a commit or a push). Running out of one is an UnreachableError naming the endpoint and the
bound. A stream (an exec's output) waits for its answer as any request does, then reads the
program's output without a bound: a command may be quiet as long as it likes.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from providers.docker.api_version import API_VERSION, MIN_API_VERSION, negotiate
from providers.docker.api_version import version_tuple as _version_tuple
from providers.docker.endpoint import DEFAULT_HOST, Endpoint, resolve_endpoint
from providers.docker.errors import out_of_time, transport_error
from providers.docker.httpx_lib import load_httpx
from providers.docker.processes import stop_all
from rigcli.errors import ProviderError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import Bound, connect_bound, read_bound

if TYPE_CHECKING:
    import httpx
else:  # imported on the first request through this client (httpx_lib.py says why)
    httpx = lazy_module("httpx", before=load_httpx)


class RunningExec(Protocol):
    """An exec in flight, as the client sees it: it can be told to stop its process group."""

    def terminate_quietly(self) -> None: ...
    def kill_quietly(self) -> None: ...


def resolve_host(configured: str | None = None) -> str:
    """The host string as given (config, then DOCKER_HOST, then the default socket), not normalised."""
    return configured or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


class DockerClient:
    """One connection pool to one daemon; thread-safe (exec streams read on worker threads)."""

    def __init__(
        self, endpoint: Endpoint | str | None = None, *, bound: Bound | None = None, api_version: str = API_VERSION
    ) -> None:
        """``bound``: each read of an answer, unless a request names its own (default RIG_READ_TIMEOUT)."""
        if not isinstance(endpoint, Endpoint):
            endpoint = resolve_endpoint({"host": endpoint} if endpoint else {})
        self.endpoint = endpoint
        self.host = endpoint.host
        self._bound = bound
        self._client: httpx.Client | None = None
        self._ours = api_version  # spoken until the daemon says it is too new for it
        self._version: str | None = None  # set once negotiated with the daemon's /version
        self._server: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._running: set[RunningExec] = set()
        self._close_when_idle = False
        _CLIENTS.add(self)

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> httpx.Client:
        load_httpx()

        endpoint = self.endpoint
        transport: httpx.BaseTransport
        # No TLS on a unix socket or plain tcp: verify=False stops httpx building a default SSL
        # context (loading the CA bundle costs ~90 ms, more than the rest of a fork's requests).
        if endpoint.mode == "unix":
            transport = httpx.HTTPTransport(uds=endpoint.socket_path, verify=False)
        elif endpoint.mode == "tls":
            transport = httpx.HTTPTransport(verify=endpoint.ssl_context())
        elif endpoint.mode == "ssh":
            from providers.docker.ssh import SshTransport  # only ssh users pay for it

            transport = SshTransport(endpoint.host)
        else:
            transport = httpx.HTTPTransport(verify=False)
        # Every request passes its own timeout (_bounds): the client's is never used.
        return httpx.Client(transport=transport, base_url=endpoint.base_url)

    def _bounds(self, bound: Bound | None) -> tuple[Bound, Bound, Any]:
        """The connect and read bounds of one request, and the httpx timeout that holds it to them."""

        reading = bound or self._bound or read_bound()
        connecting = connect_bound()
        connecting = reading if reading.seconds < connecting.seconds else connecting
        seconds = reading.seconds
        timeout = httpx.Timeout(connect=connecting.seconds, read=seconds, write=seconds, pool=seconds)
        return connecting, reading, timeout

    def _timed_out(self, exc: Exception, connecting: Bound, reading: Bound, what: str) -> ProviderError:

        if isinstance(exc, httpx.ConnectTimeout):
            return out_of_time(
                self.endpoint, "no TLS connection" if self.endpoint.mode == "tls" else "no connection", connecting
            )
        return out_of_time(self.endpoint, f"no answer to {what}", reading)

    @property
    def api_version(self) -> str:
        return self._negotiated()

    @property
    def spoken_version(self) -> str:
        """The API version requests use now, without asking: ours until the daemon refused it."""
        return self._version or self._ours

    def _negotiated(self) -> str:
        if self._version is None:
            info = self._send("GET", "/version", versioned=False)
            if info.status_code == 400 and "HTTPS server" in info.text:
                raise ProviderError(
                    f"Cannot reach the Docker daemon at {self.host}: it expects TLS and was spoken to without it; "
                    "set tls_verify=True and cert_path (or DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH)"
                )
            if info.status_code != 200:
                raise ProviderError(f"Docker daemon at {self.host} answered /version with HTTP {info.status_code}")
            self._server = dict(info.json())
            server = self._server.get("ApiVersion")
            version = negotiate(server if isinstance(server, str) else None, self._ours)
            if _version_tuple(version) < _version_tuple(MIN_API_VERSION):
                raise ProviderError(f"Docker daemon at {self.host} speaks API {version}; rig needs {MIN_API_VERSION}+")
            self._version = version
        return self._version

    def server_info(self) -> dict[str, Any]:
        """The daemon's /version answer (connecting if needed): ``Version``, ``ApiVersion``, ..."""
        self._negotiated()
        return dict(self._server)

    def _url(self, path: str, versioned: bool) -> str:
        # Not negotiated yet: ask in our version. Every daemon since Docker 20.10 accepts 1.41, so
        # the /version round trip is only needed when an older one refuses it (see _send).
        return f"/v{self._version or self._ours}{path}" if versioned else path

    def _send(
        self, method: str, path: str, *, versioned: bool = True, bound: Bound | None = None, **kwargs: Any
    ) -> httpx.Response:
        load_httpx()

        if _hijacks(path):
            kwargs["headers"] = {**kwargs.get("headers", {}), "Connection": "close"}
        connecting, reading, kwargs["timeout"] = self._bounds(bound)
        try:
            response = self._http().request(method, self._url(path, versioned), **kwargs)
            # A 400 before negotiating: "client version 1.41 is too new", or plain HTTP to a TLS
            # daemon. /version tells which (and raises the clear error); a refused request created
            # nothing, so it is sent again in the negotiated version.
            refused = response.status_code == 400 and versioned and self._version is None
            if refused and self._negotiated() != self._ours:
                response = self._http().request(method, self._url(path, versioned), **kwargs)
            return response
        except httpx.TimeoutException as exc:
            raise self._timed_out(exc, connecting, reading, f"{method} {path}") from None
        except (httpx.TransportError, OSError) as exc:
            raise transport_error(self.endpoint, exc, f"{method} {path}") from None

    def request(
        self,
        method: str,
        path: str,
        *,
        ok: tuple[int, ...] = (200, 201, 204),
        what: str | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send a request; a status outside ``ok`` becomes a ProviderError quoting the daemon.

        ``bound=`` (a ``rigcli.timeouts.Bound``) replaces the client's read bound for this request."""
        response = self._send(method, path, **kwargs)
        if response.status_code not in ok:
            raise self.error(response, what or f"{method} {path}")
        return response

    def error(self, response: httpx.Response, what: str) -> ProviderError:
        return ProviderError(f"Docker {what} failed: {daemon_message(response)} (HTTP {response.status_code})")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    @contextmanager
    def stream(self, method: str, path: str, *, body: Mapping[str, Any]) -> Iterator[httpx.Response]:
        """A response whose body is read as it arrives: its head within the read bound, the body without
        one (commands may be quiet)."""
        load_httpx()

        connecting, reading, timeout = self._bounds(None)
        self._negotiated()  # a stream's refusal cannot be sent again: settle the version first
        try:
            with self._http().stream(
                method,
                self._url(path, True),
                content=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", **({"Connection": "close"} if _hijacks(path) else {})},
                timeout=timeout,
            ) as response:
                # httpcore reads the body's timeout from this dict when the body is first read, after
                # the head came within the bound: from here on the program's output has none.
                response.request.extensions["timeout"]["read"] = None
                yield response
        except httpx.TimeoutException as exc:
            raise self._timed_out(exc, connecting, reading, f"{method} {path}") from None
        except (httpx.TransportError, OSError) as exc:
            raise transport_error(self.endpoint, exc, f"{method} {path}") from None

    @contextmanager
    def upload(
        self, path: str, *, content: bytes, params: Mapping[str, Any], read_timeout: float
    ) -> Iterator[httpx.Response]:
        """POST a tar (a build context) and read the answer as it arrives, each read bounded by
        ``read_timeout``: a build or a pull says something at least that often."""
        load_httpx()

        timeout = httpx.Timeout(connect=10.0, read=read_timeout, write=600.0, pool=30.0)
        self._negotiated()
        try:
            with self._http().stream(
                "POST",
                self._url(path, True),
                params=params,
                content=content,
                headers={"Content-Type": "application/x-tar"},
                timeout=timeout,
            ) as response:
                yield response
        except (httpx.TransportError, OSError) as exc:
            raise transport_error(self.endpoint, exc, f"POST {path}") from None

    # -- execs in flight: stopped on cancellation and at exit, before the connections go ------------

    @contextmanager
    def running(self, execution: RunningExec) -> Iterator[None]:
        with self._lock:
            self._running.add(execution)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(execution)
                idle = self._close_when_idle and not self._running
            if idle:
                self.close()

    def cancel(self) -> None:
        """The run was interrupted: SIGTERM every exec now; close the connections once they have ended."""
        with self._lock:
            running = list(self._running)
            self._close_when_idle = True
        for execution in running:
            execution.terminate_quietly()
        if not running:
            self.close()

    def shutdown(self) -> None:
        """At exit: SIGKILL what still runs in containers, then close (ending any ssh processes)."""
        with self._lock:
            running = list(self._running)
        for execution in running:
            execution.kill_quietly()
        self.close()

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def _hijacks(path: str) -> bool:
    """The daemon takes over these connections for a raw stream, and over TLS then only half-closes them
    (close_notify): such a connection must not go back to the pool, where the next request would find it dead."""
    return path.startswith("/exec/") and path.endswith("/start")


def daemon_message(response: httpx.Response) -> str:
    load_httpx()

    try:
        response.read()
        message = response.json().get("message")
    except (ValueError, AttributeError, httpx.HTTPError):
        message = None
    return str(message or response.text.strip() or response.reason_phrase).strip()


_CLIENTS: weakref.WeakSet[DockerClient] = weakref.WeakSet()


def _shutdown_all() -> None:
    for client in list(_CLIENTS):
        # At exit nobody is left to tell about a failure, and the next client still gets its turn.
        with contextlib.suppress(Exception):
            client.shutdown()
    stop_all()


atexit.register(_shutdown_all)  # registered after processes' own hook, so it runs first

__all__ = ["API_VERSION", "DEFAULT_HOST", "DockerClient", "daemon_message", "negotiate", "resolve_host"]
