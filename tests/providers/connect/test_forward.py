"""`rig forward` to a web server inside a local and a docker workspace: declared and named ports, --json
lines, concurrent connections, a refused inner connection closing only its client, a busy local port, and
Ctrl-C from a real terminal or SIGTERM leaving nothing listening and no record behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG
from tests.helpers import wait_for
from tests.providers.connect.conftest import Reached

INNER = 8080  # the server's port inside a docker workspace (a local one's is the host's: a free one)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def curl(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["curl", "-s", "--max-time", "10", *args], capture_output=True, timeout=30)


@pytest.fixture
def served(reached: Reached) -> Iterator[int]:
    """A web server inside the workspace serving its greeting.txt; its port there."""
    if reached.provider == "local":
        port = free_port()
        machine = reached.rig("exec", "dev", "--", "pwd").stdout.strip()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", machine],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield port
        finally:
            server.terminate()
            server.wait(timeout=30)
        return
    started = reached.rig("exec", "dev", "--", "sh", "-c", f"httpd -p 127.0.0.1:{INNER} -h /")
    assert started.returncode == 0, started.stderr
    try:
        yield INNER
    finally:
        reached.rig("exec", "dev", "--", "sh", "-c", "kill $(pidof httpd)")


class Forwarding:
    """A running ``rig forward`` and the lines it printed."""

    def __init__(self, reached: Reached, *args: str) -> None:
        self.process = subprocess.Popen(
            [RIG, "forward", "dev", *args],
            cwd=reached.project,
            env=reached.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def lines(self, count: int) -> list[str]:
        assert self.process.stdout is not None
        read = [self.process.stdout.readline().rstrip("\n") for _ in range(count)]
        assert all(read), (read, self.stop())
        return read

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        _, err = self.process.communicate(timeout=30)
        return self.process.returncode, err


def test_named_ports_as_json_lines_relayed_concurrently(reached: Reached, served: int) -> None:
    local = free_port()
    forwarding = Forwarding(reached, f"{local}:{served}", f"0:{served}", "--json")
    try:
        first, second = (json.loads(line) for line in forwarding.lines(2))
        assert first == {
            "workspace": "dev",
            "remote": served,
            "local": local,
            "address": "127.0.0.1",
            "url": f"http://127.0.0.1:{local}",
        }
        assert second["remote"] == served and second["local"] not in (0, local)
        # A connection held open does not keep another from being served meanwhile.
        with socket.create_connection(("127.0.0.1", local), timeout=10):
            for forward in (first, second):
                done = curl(f"{forward['url']}/greeting.txt")
                assert done.stdout == b"hello\n", done
    finally:
        code, err = forwarding.stop()
    assert code == 143, err
    assert is_free(local)


def test_declared_ports_without_a_spec(reached: Reached, served: int) -> None:
    expected = None if reached.provider == "local" or not is_free(80) else 80
    forwarding = Forwarding(reached)
    try:
        (line,) = forwarding.lines(1)
        url, arrow, where = line.partition(" -> ")
        assert arrow and where == f"dev:{reached.declared}"
        local = int(url.rsplit(":", 1)[1])
        if expected is not None:  # the declared number when it is free here
            assert local == expected
        else:  # a local workspace's ports are this host's: another one
            assert local != reached.declared
    finally:
        code, err = forwarding.stop()
    assert code == 143, err


def test_a_refused_inner_connection_closes_only_that_client(reached: Reached, served: int) -> None:
    good, bad, nothing = free_port(), free_port(), free_port()
    closed = nothing if reached.provider == "local" else 9  # nothing listens there inside
    forwarding = Forwarding(reached, f"{good}:{served}", f"{bad}:{closed}")
    try:
        forwarding.lines(2)
        refused = curl(f"http://127.0.0.1:{bad}/")
        assert refused.returncode != 0 and refused.stdout == b""
        assert curl(f"http://127.0.0.1:{good}/greeting.txt").stdout == b"hello\n"
        assert forwarding.process.poll() is None
    finally:
        code, err = forwarding.stop()
    assert code == 143
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == 1 and f"dev:{closed}" in said[0], err


def test_a_busy_local_port_is_exit_1_naming_it(reached: Reached) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        other = free_port()
        done = reached.rig("forward", "dev", f"{other}:80", f"{port}:80")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: Local port {port} on 127.0.0.1 is in use"]
    assert done.stdout == ""
    assert is_free(other)  # the one bound before it was let go


def test_bad_specs_are_usage_errors(reached: Reached) -> None:
    for spec in ("http", "70000", "1:0", "a:80"):
        done = reached.rig("forward", "dev", spec)
        assert done.returncode == 2, (spec, done.stderr)
        assert "rig forward:" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_in_a_terminal_ends_it_with_nothing_listening(reached: Reached, served: int) -> None:
    import pexpect

    local = free_port()
    records = Path(reached.env["RIG_HOME"]) / "ssh" / "forwards"
    child = pexpect.spawn(RIG, ["forward", "dev", f"{local}:{served}"], cwd=str(reached.project), env=reached.env)
    try:
        child.expect(f"http://127.0.0.1:{local} -> dev:{served}", timeout=60)
        assert curl(f"http://127.0.0.1:{local}/greeting.txt").stdout == b"hello\n"
        recorded = [json.loads(path.read_text()) for path in records.glob("*.json")]
        assert [record["forwards"][0]["local"] for record in recorded if record["pid"] == child.pid] == [local]
        child.sendintr()  # the terminal's own Ctrl-C: SIGINT to the foreground process group
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 130
    assert is_free(local)
    assert not any(json.loads(path.read_text())["pid"] == child.pid for path in records.glob("*.json"))
    assert not os.path.exists(f"/proc/{child.pid}")
    wait_for(lambda: is_free(local), "the port to be free", timeout=5)
