"""The lifecycle hooks' commands in their three forms, run in a machine (or, for initializeCommand, on this host).

A string runs as ``/bin/sh -c STRING``; an array is one program and its arguments, run as written
(no shell reads it); an object is named commands of either form, all run at once. Any command
that fails fails the hook, with an error naming the hook's key and the command.
"""

from __future__ import annotations

import shlex
import subprocess
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from rigcli.errors import TaskError
from rigcli.jsonutil import JsonValue


class _Result(Protocol):
    exit_code: int
    stderr: str


class ExecMachine(Protocol):
    """What a hook needs of a machine: the docker provider's exec."""

    def exec(
        self,
        command: str,
        *,
        name: str | None = ...,
        env: Mapping[str, str] | None = ...,
        cwd: str | None = ...,
        check: bool = ...,
    ) -> Any: ...


def commands_of(form: JsonValue) -> list[tuple[str | None, str]]:
    """(name or None, the command as a shell line) for each command of a hook; none for an empty one."""
    if form is None:
        return []
    if isinstance(form, str):
        return [(None, form)] if form.strip() else []
    if isinstance(form, list):
        return [(None, shlex.join(str(word) for word in form))] if form else []
    if isinstance(form, dict):
        found: list[tuple[str | None, str]] = []
        for name, command in form.items():
            found.extend((name, line) for _, line in commands_of(command))
        return found
    raise TaskError(f"A lifecycle command must be a string, an array or an object, not {type(form).__name__}")


def shown(form: JsonValue, name: str | None) -> str:
    """The command as the user wrote it, for an error."""
    if isinstance(form, dict) and name is not None:
        form = form.get(name)
    if isinstance(form, list):
        return " ".join(str(word) for word in form)
    return str(form)


def run_in_machine(machine: ExecMachine, key: str, form: JsonValue, *, env: Mapping[str, str], cwd: str) -> None:
    """Run hook ``key`` in ``machine``; the named commands of an object at once. Raises TaskError on a failure."""
    commands = commands_of(form)
    failures: list[str] = []

    def one(name: str | None, line: str) -> None:
        label = f"{key} {name}" if name else key
        try:
            result = machine.exec(line, name=label, env=dict(env), cwd=cwd, check=False)
        except Exception as exc:  # the daemon went away, the run was interrupted: said as it is
            failures.append(f"{_named(key, name)} `{shown(form, name)}` could not run: {exc}")
            return
        if result.exit_code != 0:
            failures.append(f"{_named(key, name)} `{shown(form, name)}` failed with exit code {result.exit_code}")

    if len(commands) == 1 and commands[0][0] is None:
        one(*commands[0])
    else:
        threads = [threading.Thread(target=one, args=item, name=f"rig-{key}-{item[0]}") for item in commands]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise TaskError("; ".join(failures))


def run_on_host(key: str, form: JsonValue, *, cwd: str) -> None:
    """Run hook ``key`` on this host in ``cwd``, its output shown as the task's; raises TaskError on a failure."""
    failures: list[str] = []

    def one(name: str | None, argv: list[str]) -> None:
        try:
            done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        except OSError as exc:
            failures.append(f"{_named(key, name)} `{shown(form, name)}` could not start: {exc.strerror or exc}")
            return
        for line in (done.stdout + done.stderr).splitlines():
            print(line)  # the task's log
        if done.returncode != 0:
            failures.append(f"{_named(key, name)} `{shown(form, name)}` failed with exit code {done.returncode}")

    jobs = _host_argvs(form)
    threads = [threading.Thread(target=one, args=job, name=f"rig-{key}") for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise TaskError("; ".join(failures))


def _host_argvs(form: JsonValue) -> list[tuple[str | None, list[str]]]:
    if isinstance(form, str):
        return [(None, ["/bin/sh", "-c", form])] if form.strip() else []
    if isinstance(form, list):
        return [(None, [str(word) for word in form])] if form else []
    if isinstance(form, dict):
        return [(name, argv) for name, command in form.items() for _, argv in _host_argvs(command)]
    return []


def _named(key: str, name: str | None) -> str:
    return f"{key} ({name})" if name else key


__all__ = ["ExecMachine", "commands_of", "run_in_machine", "run_on_host", "shown"]
