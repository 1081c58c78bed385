"""The real OpenSSH client against `rig ssh-proxy`, on a local and a docker workspace: exec, exit
status and signals, stdin, a pty that follows resizes, env, sftp and scp, ssh -L and -D, ControlMaster
reuse, and agent forwarding on local."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.providers.connect.conftest import Reached


def test_exit_status_and_streams_apart(reached: Reached) -> None:
    done = reached.ssh(reached.alias, "echo out; echo err >&2; exit 7")
    assert done.returncode == 7
    assert done.stdout == b"out\n"
    assert b"err\n" in done.stderr


def test_stdin_to_its_end_echoed_back(reached: Reached) -> None:
    data = os.urandom(1_000_000)
    done = reached.ssh(reached.alias, "cat", input=data)
    assert done.returncode == 0, done.stderr
    assert done.stdout == data


def test_a_program_killed_by_a_signal(reached: Reached) -> None:
    done = reached.ssh(reached.alias, "kill -9 $$")
    # local reports the signal (exit-signal: ssh exits 255); Docker reports 128 + 9, as docker exec does.
    assert done.returncode == (255 if reached.provider == "local" else 137), done.stderr


def test_env_from_setenv(reached: Reached) -> None:
    done = reached.ssh("-o", "SetEnv=LC_RIGTEST=yes LANG=C.UTF-8", reached.alias, 'echo "$LC_RIGTEST $LANG"')
    assert done.stdout == b"yes C.UTF-8\n", done.stderr


def test_a_pty_with_term_and_window_size_that_follows_resizes(reached: Reached) -> None:
    import pexpect

    child = pexpect.spawn(
        reached.ssh_argv("-tt", reached.alias)[0],
        reached.ssh_argv("-tt", reached.alias)[1:],
        env={**reached.env, "TERM": "xterm-256color"},
        dimensions=(30, 100),
        timeout=30,
    )
    try:
        child.sendline("echo T=$TERM; stty size")
        child.expect("T=xterm-256color")
        child.expect("30 100")
        child.setwinsize(40, 120)
        time.sleep(0.5)
        child.sendline("stty size")
        child.expect("40 120")
        child.sendline("exit 3")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 3


def test_sftp_and_scp_both_ways_byte_identical(reached: Reached, tmp_path: Path) -> None:
    source = tmp_path / "up.bin"
    source.write_bytes(os.urandom(3_000_000))
    batch = tmp_path / "batch"
    batch.write_text(f"put {source} /tmp/sftp.bin\nget /tmp/sftp.bin {tmp_path / 'down.bin'}\n")
    done = subprocess.run(
        reached.ssh_argv("-b", str(batch), reached.alias, tool="sftp"), env=reached.env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "down.bin").read_bytes() == source.read_bytes()
    up = subprocess.run(
        reached.ssh_argv(str(source), f"{reached.alias}:/tmp/scp.bin", tool="scp"), env=reached.env, timeout=60
    )
    assert up.returncode == 0
    down = subprocess.run(
        reached.ssh_argv(f"{reached.alias}:/tmp/scp.bin", str(tmp_path / "scp.bin"), tool="scp"),
        env=reached.env,
        timeout=60,
    )
    assert down.returncode == 0
    assert (tmp_path / "scp.bin").read_bytes() == source.read_bytes()
    missing = subprocess.run(
        reached.ssh_argv(f"{reached.alias}:/tmp/no-such-file", str(tmp_path / "x"), tool="scp"),
        env=reached.env,
        capture_output=True,
        timeout=60,
    )
    assert missing.returncode != 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve_inside(reached: Reached, port: int) -> subprocess.Popen[bytes]:
    """A web server inside the workspace serving a directory with greeting.txt, for as long as the test."""
    if reached.provider == "local":
        command = f"exec python3 -m http.server {port} --bind 127.0.0.1"
    else:
        command = f"cd / && exec httpd -f -p 127.0.0.1:{port} -h /"
    return subprocess.Popen(reached.ssh_argv("-o", "ControlPath=none", reached.alias, command), env=reached.env)


def _curl(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["curl", "-s", "--max-time", "10", *args], capture_output=True, timeout=30)


def test_ssh_L_and_D_to_a_server_inside(reached: Reached) -> None:
    inner, local_port, socks_port = 8000 if reached.provider == "docker" else _free_port(), _free_port(), _free_port()
    server = _serve_inside(reached, inner)
    tunnel = subprocess.Popen(
        reached.ssh_argv(
            "-o",
            "ControlPath=none",
            "-N",
            "-L",
            f"{local_port}:127.0.0.1:{inner}",
            "-D",
            str(socks_port),
            reached.alias,
        ),
        env=reached.env,
    )
    try:
        url = f"http://127.0.0.1:{local_port}/greeting.txt"
        wait_for(lambda: _curl(url).stdout == b"hello\n", "the page through ssh -L", timeout=30, interval=0.3)
        through = _curl("--socks5-hostname", f"127.0.0.1:{socks_port}", f"http://127.0.0.1:{inner}/greeting.txt")
        assert through.stdout == b"hello\n"
    finally:
        for process in (tunnel, server):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def _proxies(reached: Reached) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                words = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"ssh-proxy" in words and str(reached.project).encode() in words:
                found.append(int(name))
    return found


def test_control_master_reuse_costs_no_new_proxy(reached: Reached) -> None:
    reached.end_masters()
    wait_for(lambda: not _proxies(reached), "the proxies to end", timeout=30)
    assert reached.ssh(reached.alias, "true").returncode == 0
    assert reached.ssh("-O", "check", reached.alias).returncode == 0
    first = _proxies(reached)
    assert len(first) == 1
    assert reached.ssh(reached.alias, "true").returncode == 0
    assert _proxies(reached) == first


def test_agent_forwarding_on_local(local_reached: Reached, tmp_path: Path) -> None:
    reached = local_reached
    started = subprocess.run(["ssh-agent", "-s"], capture_output=True, text=True, timeout=30)
    values = dict(part.split("=", 1) for line in started.stdout.split(";") for part in [line.strip()] if "=" in part)
    agent_env = {**reached.env, "SSH_AUTH_SOCK": values["SSH_AUTH_SOCK"]}
    try:
        key = tmp_path / "id_ed25519"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rig-agent-test", "-f", str(key)], check=True
        )
        subprocess.run(["ssh-add", str(key)], env=agent_env, capture_output=True, check=True, timeout=30)
        done = subprocess.run(
            reached.ssh_argv("-o", "ControlPath=none", "-A", reached.alias, "ssh-add -l"),
            env=agent_env,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert b"rig-agent-test" in done.stdout
    finally:
        os.kill(int(values["SSH_AGENT_PID"]), signal.SIGTERM)


@pytest.mark.parametrize("word", ["nope"])
def test_an_unknown_workspace_is_one_line(local_reached: Reached, word: str) -> None:
    done = local_reached.rig("ssh-proxy", word, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert f'Unknown workspace "{word}"' in done.stderr
    assert "Traceback" not in done.stderr


def test_remote_daemons_exec_scp_and_forward(reached_remote: Reached, tmp_path: Path) -> None:
    reached = reached_remote
    done = reached.ssh(reached.alias, "echo out; exit 5")
    assert (done.returncode, done.stdout) == (5, b"out\n"), done.stderr
    source = tmp_path / "up.bin"
    source.write_bytes(os.urandom(200_000))
    up = subprocess.run(reached.ssh_argv(str(source), f"{reached.alias}:/tmp/up.bin", tool="scp"), env=reached.env)
    assert up.returncode == 0
    assert reached.ssh(reached.alias, "cat /tmp/up.bin").stdout == source.read_bytes()
    test_ssh_L_and_D_to_a_server_inside(reached)
