"""An SSH session channel (exec, shell, with or without a pty) as a program run by the provider's
``open_exec``: stdin, stdout and stderr relayed, the window size followed, signals passed on, and the
program's end sent back as ``exit-status`` (or ``exit-signal`` where the provider reports one)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from rigcli.connect.bridge import CHUNK, OPEN, blocking
from rigcli.connect.pumps import Inbound, Outbound
from rigcli.errors import RigError
from rigcli.provider_kit.connect import STDOUT, ExecStream, PtyRequest, SupportsExecStreams
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import asyncssh

    from rigcli.engine.connect_target import ConnectTarget
else:
    asyncssh = lazy_module("asyncssh")


# What a client may set in the program's environment (SetEnv/SendEnv), as Debian's sshd accepts.
def accepted(name: str) -> bool:
    return name in ("LANG", "TERM", "LANGUAGE", "COLORTERM") or name.startswith("LC_")


async def run_process(target: ConnectTarget, process: asyncssh.SSHServerProcess[bytes]) -> None:
    controller = target.controller
    assert isinstance(controller, SupportsExecStreams)
    env = {key: value for key, value in process.env.items() if accepted(key)}
    term = process.term_type
    pty = None
    if term:
        columns, rows, _, _ = process.term_size
        pty = PtyRequest(term, columns or 80, rows or 24)
        env["TERM"] = term
    agent = process.channel.get_agent_path()
    if agent and target.provider_id == "local":
        env["SSH_AUTH_SOCK"] = agent  # the host is the machine: the listener asyncssh made is inside it
    command = process.command
    argv = ["sh", "-c", command] if command is not None else None
    try:
        program = await blocking(lambda: controller.open_exec(target.resource, argv, pty=pty, env=env, cwd=None))
    except RigError as exc:
        process.stderr.write(f"rig: {exc}\r\n".encode())
        process.exit(255)
        return
    OPEN.add(program)
    output = Inbound(program.read, lambda chunk: not chunk[0], "rig-exec-out")
    feeding = asyncio.ensure_future(
        _feed(process, program, Outbound(program.write, program.close_stdin, "rig-exec-in"))
    )
    try:
        await _drain(process, output)
        status = await blocking(program.wait)
    finally:
        output.stop()
        feeding.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await feeding
        OPEN.discard(program)
        await blocking(program.close)
    if status.signal is not None:
        process.exit_with_signal(status.signal)
    else:
        process.exit(status.code if status.code is not None else 255)


async def _drain(process: asyncssh.SSHServerProcess[bytes], output: Inbound[tuple[int, bytes]]) -> None:
    while True:
        stream, data = await output.get()
        if not stream:
            return
        writer = process.stdout if stream == STDOUT else process.stderr
        writer.write(data)
        await writer.drain()


async def _feed(process: asyncssh.SSHServerProcess[bytes], program: ExecStream, stdin: Outbound) -> None:
    try:
        while True:
            try:
                data = await process.stdin.read(CHUNK)
            except asyncssh.TerminalSizeChanged as change:
                if change.width and change.height:  # a client without a terminal of its own says 0x0
                    await blocking(program.resize, change.width, change.height)
                continue
            except asyncssh.SignalReceived as received:
                await blocking(program.signal, received.signal)
                continue
            except asyncssh.BreakReceived:
                await blocking(program.signal, "INT")
                continue
            if not data:
                await stdin.finish()  # what was sent, then the end of input (in order, on the writer's thread)
                return
            await stdin.put(data)
    finally:
        stdin.abandon()


__all__ = ["run_process"]
