"""Relay 127.0.0.1:PORT inside other network namespaces to 127.0.0.1:PORT in this one (used by .ci/swarm.sh).

The test registry listens on the host's loopback. Each swarm node is a dockerd in a network
namespace of its own, whose loopback is its own: this relay listens on that loopback too, so
``127.0.0.1:PORT/rig/base:busybox`` names the same registry on the host and on every node, and
the host's network configuration is never touched (no veth into the host, no routes, no rules).

    python3 netns_relay.py PORT PIDFILE /var/run/netns/NODE_A [/var/run/netns/NODE_B ...]

A listening socket belongs to the namespace it was made in: the relay enters each node's
namespace just long enough to bind there, comes back, and makes every outgoing connection here.
It writes PIDFILE once all listeners are bound; stop it with SIGTERM.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def enter(namespace_fd: int) -> None:
    if _libc.setns(namespace_fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


def listen_in(namespace: str, port: int) -> socket.socket:
    fd = os.open(namespace, os.O_RDONLY)
    try:
        enter(fd)
    finally:
        os.close(fd)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    return listener


def pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def relay(client: socket.socket, port: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def serve(listener: socket.socket, port: int) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=relay, args=(client, port), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    port, pidfile, namespaces = int(argv[1]), argv[2], argv[3:]
    # Single-threaded until every listener is bound: setns changes only the calling thread's namespace,
    # and threads started afterwards inherit this (the host's) one.
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    listeners = []
    try:
        for namespace in namespaces:
            listeners.append(listen_in(namespace, port))
    finally:
        enter(home)
        os.close(home)
    for listener in listeners:
        threading.Thread(target=serve, args=(listener, port), daemon=True).start()
    with open(pidfile, "w") as handle:
        handle.write(f"{os.getpid()}\n")
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
