"""A unix stream socket without ``import socket``: rig shell/exec answered from the cache talks to a local daemon.

``socket.py`` is a thin layer over the ``_socket`` extension that, at import, turns each family
of the extension's constants into an ``IntEnum`` (``AddressFamily``, ``SocketKind``, ...): ~14 M
instructions, ~5 ms, a tenth of what ``rig exec WS -- true`` costs rig itself, for names a
connection to ``/var/run/docker.sock`` never shows. The extension's own socket object has every
method such a connection uses (``connect``, ``sendall``, ``recv``, ``settimeout``, ``shutdown``,
``fileno``, ``close``); ``socket.socket`` is its subclass, so code typed for this one takes both.
TCP and TLS still import ``socket`` (``create_connection``, ``ssl``).
"""

from __future__ import annotations

import _socket

SHUT_WR = _socket.SHUT_WR
Socket = _socket.socket


def unix_stream() -> _socket.socket:
    """A new ``AF_UNIX``/``SOCK_STREAM`` socket, as ``socket.socket(AF_UNIX, SOCK_STREAM)`` makes."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


__all__ = ["SHUT_WR", "Socket", "unix_stream"]
