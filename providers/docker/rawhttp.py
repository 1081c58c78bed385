"""HTTP/1.1 to the daemon on a connection rig holds itself, for what httpx does not offer: a hijacked stream.

``rig shell``/``rig exec`` attach to an exec the way the docker CLI does: ``POST /exec/{id}/start``
with ``Connection: Upgrade``/``Upgrade: tcp``, after which the connection carries the program's raw
bytes both ways, and closing our half of it is the program's end of input. That needs the socket
itself, over every transport the provider speaks: a unix socket, tcp (with mutual TLS, through a
memory BIO so the write half can be closed with close_notify while the read half goes on), and ssh
(``docker system dial-stdio``: its stdin and stdout). The few plain requests an attach makes
(create, resize, inspect) go over the same kind of connection, so this path never imports httpx.

Every wait is bounded (``rigcli/timeouts.py``): connecting by RIG_CONNECT_TIMEOUT, each read of an
answer by the request's bound (RIG_READ_TIMEOUT unless the caller asks less, as a plan's check
does); only a hijacked stream, once the daemon has handed it over, is read without one. A daemon
that ran out of a bound is not asked again for SILENCE_STANDS seconds anything it would have as
long or less to answer: the first answer (an UnreachableError naming the endpoint and the bound)
stands, so a ``rig plan`` or ``rig ls`` with many questions for a daemon that never answers waits
for one.
"""

from __future__ import annotations

import _thread
from time import monotonic

from providers.docker.api_version import API_VERSION, MIN_API_VERSION, negotiate, version_tuple
from providers.docker.connection import Connection
from providers.docker.endpoint import Endpoint
from providers.docker.errors import out_of_time, transport_error
from providers.docker.rawconn import connect
from rigcli.errors import ProviderError, UnreachableError
from rigcli.speed.json_lite import loads_bytes
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import Bound, connect_bound, read_bound

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    import urllib.parse as urllib_parse
else:
    urllib_parse = lazy_module("urllib.parse")


class Response:
    """A daemon's answer (a plain class: rig shell/exec answered from the cache loads no dataclasses)."""

    __slots__ = ("body", "headers", "leftover", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes = b"", leftover: bytes = b"") -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.leftover = leftover  # after an upgrade: the first bytes of the stream

    def json(self) -> Any:
        return loads_bytes(self.body or b"null")

    def message(self) -> str:
        try:
            found = self.json().get("message")
        except (ValueError, AttributeError):
            found = None
        return str(found or self.body.decode("utf-8", "replace").strip() or f"HTTP {self.status}")


class Reader:
    """Reads an HTTP response off a connection, keeping what it read past the response."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.buffer = b""

    def _more(self) -> None:
        data = self.conn.recv()
        if not data:
            raise ConnectionError("the daemon closed the connection mid-response")
        self.buffer += data

    def head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            self._more()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._more()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._more()
        data, self.buffer = self.buffer.split(b"\r\n", 1)
        return data

    def body(self, status: int, headers: dict[str, str]) -> bytes:
        if status in (101, 204, 304) or 100 <= status < 200:
            return b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.line().split(b";")[0], 16)
                if size == 0:
                    while self.line():
                        pass
                    return b"".join(parts)
                parts.append(self.exactly(size))
                self.exactly(2)
        if "content-length" in headers:
            return self.exactly(int(headers["content-length"]))
        while True:  # delimited by the end of the connection
            data = self.conn.recv()
            if not data:
                return self.buffer
            self.buffer += data


class RawClient:
    """Requests to one daemon on connections of our own; ``upgrade`` hands one over as a raw stream."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.version = API_VERSION
        # Kept-alive connections not in use. Each request takes one (or connects) and gives it back,
        # so requests from several threads (the create hooks of fork --count) go at once, each on
        # its own connection, as httpx's pool would let them.
        self._idle: list[Connection] = []
        self._generation = 0  # raised by close(): a connection taken before it is not kept
        self._lock = _thread.allocate_lock()  # guards _idle and _generation (threading.Lock)

    def _message(self, method: str, path: str, body: Any, headers: dict[str, str], *, versioned: bool = True) -> bytes:
        host = _netloc(self.endpoint.base_url) if self.endpoint.mode in ("tcp", "tls") else "docker"
        if body is None:
            payload = b""
        else:
            from rigcli.speed.json_lite import dumps  # json.dumps, without json's import of re

            payload = dumps(body).encode()
        target = f"/v{self.version}{path}" if versioned else path
        lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "User-Agent: rig"]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        bound: Bound | None = None,
        versioned: bool = True,
    ) -> Response:
        """One request on a kept-alive connection (a kept one the daemon closed is replaced once).

        ``bound``: how long each read of the answer may take (default RIG_READ_TIMEOUT); a new
        connection is made within RIG_CONNECT_TIMEOUT, or ``bound`` when that is shorter. Past it
        the request fails at once with an UnreachableError naming both (a daemon that does not
        answer is not asked twice)."""
        what = f"{method} {path}"  # in messages: the query string can be long
        if params:
            path = f"{path}?{query_string(params)}"
        bound = bound or read_bound()
        _refuse_if_silent(self.endpoint, bound)
        connecting = connect_bound()
        connecting = bound if bound.seconds < connecting.seconds else connecting
        for attempt in (1, 2):
            with self._lock:
                kept = self._idle.pop() if self._idle else None
                generation = self._generation
            try:
                conn = kept or connect(self.endpoint, connecting)
            except UnreachableError as exc:
                _remember_silence(self.endpoint, connecting, exc)
                raise
            try:
                conn.set_timeout(bound.seconds)
                conn.send(self._message(method, path, body, {}, versioned=versioned))
                reader = Reader(conn)
                status, headers = reader.head()
                response = Response(status, headers, reader.body(status, headers))
                conn.set_timeout(None)
            except TimeoutError:
                conn.close()
                error = out_of_time(self.endpoint, f"no answer to {what}", bound)
                _remember_silence(self.endpoint, bound, error)
                raise error from None
            except (ConnectionError, OSError) as exc:
                conn.close()
                # Only a kept connection is tried again (the daemon may have closed it while it sat
                # idle); a new one's failure is the answer, and a create is never sent twice for it.
                if attempt == 2 or kept is None:
                    raise transport_error(self.endpoint, exc, what) from None
                continue
            self._give_back(conn, generation, reusable=headers.get("connection", "").lower() != "close")
            if response.status == 400 and b"HTTPS server" in response.body:
                raise ProviderError(
                    f"Cannot reach the Docker daemon at {self.endpoint.host}: it expects TLS and was spoken to "
                    "without it; set tls_verify=True and cert_path (or DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH)"
                )
            if response.status == 400 and versioned and self._too_new(response, bound):
                continue
            return response
        raise AssertionError("unreachable")

    def _give_back(self, conn: Connection, generation: int, *, reusable: bool) -> None:
        with self._lock:
            if reusable and generation == self._generation:
                self._idle.append(conn)
                return
        conn.close()

    def _too_new(self, response: Response, bound: Bound) -> bool:
        """The daemon is older than our API version: speak its own from now on (True: send again)."""
        if "client version" not in response.message() or self.version != API_VERSION:
            return False
        answer = self.request("GET", "/version", bound=bound, versioned=False)
        found = answer.json() if answer.status == 200 else None
        server = found.get("ApiVersion") if isinstance(found, dict) else None
        version = negotiate(server if isinstance(server, str) else None)
        if version_tuple(version) < version_tuple(MIN_API_VERSION):
            raise ProviderError(
                f"Docker daemon at {self.endpoint.host} speaks API {version}; rig needs {MIN_API_VERSION}+"
            )
        self.version = version
        return version != API_VERSION

    def upgrade(self, path: str, body: Any) -> tuple[Connection, Response]:
        """``POST path`` asking for the connection itself: the stream's first bytes are ``response.leftover``.

        The daemon's answer is awaited within RIG_READ_TIMEOUT; the stream it hands over is read without
        a bound (a program may be quiet as long as it likes)."""
        bound = read_bound()
        _refuse_if_silent(self.endpoint, bound)
        conn = connect(self.endpoint)
        try:
            conn.set_timeout(bound.seconds)
            conn.send(self._message("POST", path, body, {"Connection": "Upgrade", "Upgrade": "tcp"}))
            reader = Reader(conn)
            status, headers = reader.head()
            if status not in (101, 200):
                response = Response(status, headers, reader.body(status, headers))
                conn.close()
                return conn, response
            conn.set_timeout(None)
            return conn, Response(status, headers, leftover=reader.buffer)
        except TimeoutError:
            conn.close()
            error = out_of_time(self.endpoint, f"no answer to POST {path}", bound)
            _remember_silence(self.endpoint, bound, error)
            raise error from None
        except (ConnectionError, OSError) as exc:
            conn.close()
            raise ProviderError(f"Docker request POST {path} to {self.endpoint.host} failed: {exc}") from None

    def close(self) -> None:
        """Close the kept connections; one in use now is closed when its request ends."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for conn in idle:
            conn.close()


# Daemons that ran out of a bound: host -> (the bound's seconds, the error it gave, until when it stands).
_SILENT: dict[str, tuple[float, UnreachableError, float]] = {}
SILENCE_STANDS = 30.0  # seconds: one command's questions come within it; a long-lived process asks again later


def _remember_silence(endpoint: Endpoint, bound: Bound, error: UnreachableError) -> None:
    known = _SILENT.get(endpoint.host)
    if known is None or known[0] < bound.seconds or known[2] < monotonic():
        _SILENT[endpoint.host] = (bound.seconds, error, monotonic() + SILENCE_STANDS)


def _refuse_if_silent(endpoint: Endpoint, bound: Bound) -> None:
    """The earlier answer, for a daemon that did not answer within this bound or a longer one a moment ago."""
    known = _SILENT.get(endpoint.host)
    if known is not None and bound.seconds <= known[0] and monotonic() < known[2]:
        raise known[1]


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def query_string(params: dict[str, Any]) -> str:
    """``urllib.parse.urlencode(params)`` (each value as ``str``), without importing urllib.parse and
    the ipaddress module it brings (~10M instructions, as much as the rest of ``rig ls``'s probe)."""
    return "&".join(f"{_quote_plus(str(key))}={_quote_plus(str(value))}" for key, value in params.items())


def _quote_plus(text: str) -> str:
    quoted = (chr(byte) if byte in _UNRESERVED else "+" if byte == 32 else f"%{byte:02X}" for byte in text.encode())
    return "".join(quoted)


def _netloc(url: str) -> str:
    """The ``host:port`` of a tcp daemon's URL (urllib.parse, imported by the requests that need it)."""

    return urllib_parse.urlsplit(url).netloc


__all__ = ["RawClient", "Reader", "Response", "query_string"]
