"""A hostile project that shows a secret() value through every output path rig relays, and a sweep that counts leaks.

Each task, hook or operation of ``SWEEP_CONFIG`` writes the secret one way (``print``, ``sys.stdout.write``,
logging, ``os.write`` to fd 1 and 2 — also split across two writes —, a child process's stdout and stderr,
``local.run``, ``machine.exec``, an exception, a ``ProviderError`` from a failed command, an operation's result,
the context of the ``--json`` document). ``sweep`` runs each of them for each kind of secret (a PEM key, a
value that ends in a newline) and each way of running rig (plain and ``--json`` off a terminal, and in a terminal), and
returns every place a line of the secret was seen: stdout, stderr, or a file under ``.rig`` or ``$RIG_HOME``.

Run it whole: ``python -m tests.cli.secret_sweep`` (the test suite runs a reduced form).
"""

from __future__ import annotations

import base64
import json
import secrets as random
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, write_project

SWEEP_CONFIG = r"""
import atexit, logging, os, subprocess, sys, time

from rigcli import define_provider, define_config, secret, sequence
from rigcli.errors import ProviderError


class Plugin:
    provider_id = "vault"

    def create_provider(self, setup):
        token = setup.config["token"]

        class Controller:
            provider_id = "vault"

            def runtime(self, context):
                return token

        return Controller()


SHOW = 'printf "%s" "$RIG_TEST_SECRET"'


def path_print(step, vault):
    print(vault)
    print("inline:" + vault + ":end")


def path_write(step, vault):
    sys.stdout.write(vault)
    sys.stderr.write(vault)
    sys.stdout.write("\n")


def path_logging(step, vault, log):
    logging.getLogger("project").warning("logged %s", vault)
    log.info("the log parameter: %s", vault)


def path_fd1(step, vault):
    os.write(1, vault.encode() + b"\n")


def path_fd2(step, vault):
    os.write(2, vault.encode() + b"\n")


def path_fd_split(step, vault):
    half = len(vault) // 2
    os.write(1, b"split:" + vault[:half].encode())
    time.sleep(0.2)
    os.write(1, vault[half:].encode() + b"\n")


def path_child_stdout(step):
    subprocess.run(["sh", "-c", SHOW], check=True)


def path_child_stderr(step):
    subprocess.run(["sh", "-c", SHOW + " >&2"], check=True)


def path_local_run(step, local):
    local.run(["sh", "-c", SHOW + "; " + SHOW + " >&2"])


def path_exec(step, box):
    box.create_machine().exec(SHOW + "; echo; " + SHOW + " >&2", name="show")


def path_result(step, vault):
    return {"ctx": {"token": vault, "header": "Bearer " + vault}}


def path_raise(step, vault):
    raise RuntimeError("cannot use " + vault)


def path_provider_error(step, vault):
    raise ProviderError("provider says " + vault)


def path_exec_fails(step, box):
    # $(...) drops the value's trailing newline: the error quotes the value without it
    box.create_machine().exec('printf "%s" "$(printenv RIG_TEST_SECRET)"; exit 3', name="fails")


def path_operation(workflow, vault):
    return "result " + vault


def path_atexit(step, vault):
    atexit.register(lambda: print("at exit " + vault))


PATHS = [name for name in dict(globals()) if name.startswith("path_") and name != "path_operation"]
providers = {
    "vault": define_provider("vault", plugin=Plugin(), token=secret("RIG_TEST_SECRET")),
    "box": define_provider("local"),
}
workflows = define_config(
    workflows=[
        sequence(name[len("path_"):].replace("_", "-")).task("leak", globals()[name], cache_ttl=0)
        .operation("show", run=path_operation)
        for name in PATHS
    ],
    providers=providers,
)
"""

# The tasks of SWEEP_CONFIG whose run fails (the secret is in the error).
FAILING = {"raise", "provider-error", "exec-fails"}
PATHS = [
    "print",
    "write",
    "logging",
    "fd1",
    "fd2",
    "fd-split",
    "child-stdout",
    "child-stderr",
    "local-run",
    "exec",
    "result",
    "raise",
    "provider-error",
    "exec-fails",
    "atexit",
    "operation",
]
MODES = ["plain", "json", "terminal"]
# What --json shows of a path (the rest is task output, which only the human renderers show);
# plain output shows every path but the context a task returns.
SHOWN_IN_JSON = {
    "fd1",
    "fd2",
    "fd-split",
    "child-stdout",
    "child-stderr",
    "local-run",
    "result",
    "operation",
    "atexit",
    "raise",
    "provider-error",
}


def pem_secret() -> str:
    """A PEM block: a header, random base64 body lines of 64 characters, a footer, a final newline."""
    body = base64.b64encode(random.token_bytes(150)).decode()
    lines = [body[index : index + 64] for index in range(0, len(body), 64)]
    return "-----BEGIN RIG TEST KEY-----\n" + "\n".join(lines) + "\n-----END RIG TEST KEY-----\n"


def newline_secret() -> str:
    return f"tok-{random.token_hex(12)}\n"


SECRETS = {"pem": pem_secret, "newline": newline_secret}


def secret_pieces(value: str) -> list[str]:
    """What must never be seen: the value without its trailing whitespace, and every line of it
    that is long enough to be masked (four characters or more)."""
    pieces = {value.rstrip()}
    pieces.update(line.strip() for line in value.splitlines() if len(line.strip()) >= 4)
    return sorted(pieces, key=len, reverse=True)


@dataclass(frozen=True)
class Leak:
    secret: str
    path: str
    mode: str
    where: str
    piece: str

    def __str__(self) -> str:
        return f"{self.secret} secret via {self.path} ({self.mode}) seen in {self.where}: {self.piece[:30]!r}"


def run_path(project: Path, home: Path, value: str, path: str, mode: str) -> Result:
    env = {"RIG_TEST_SECRET": value, "RIG_HOME": str(home), "RIG_TRUST_HOST_COMMANDS": "1"}
    if mode != "terminal":
        env["RIG_RENDER"] = "0"
    args = ["--json"] if mode == "json" else []
    if path == "operation":
        args += ["--workflow", "print", "op", "show"]
    else:
        args += ["--workflow", path, "apply"]
    if mode == "terminal":
        result = run_in_terminal(*args, cwd=project, env=env)
    else:
        result = run_rig(*args, cwd=project, env=env, subprocess=True)
    expected = 1 if path in FAILING else 0
    assert result.returncode == expected, result
    return result


def run_in_terminal(*args: str, cwd: Path, env: dict[str, str]) -> Result:
    """``rig ARGS`` in a pseudo-terminal (the live view, a terminal on stdin, stdout and stderr);
    everything it shows is the result's stdout."""
    import pexpect

    full = env_with_rig({**env, "TERM": "xterm-256color"})
    full.pop("NO_COLOR", None)
    child = pexpect.spawn(RIG, list(args), cwd=str(cwd), env=full, encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.expect(pexpect.EOF)
    child.close()
    return Result(list(args), child.exitstatus if child.exitstatus is not None else -1, child.before or "", "")


def _one_document(stdout: str) -> bool:
    try:
        json.loads(stdout)
    except ValueError:
        return False
    return True


def stored_files(*roots: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for root in roots if root.exists() for path in root.rglob("*") if path.is_file()}


def every_combination() -> list[tuple[str, str]]:
    return [(path, mode) for path in PATHS for mode in MODES]


def one_mode_each(offset: int = 0) -> list[tuple[str, str]]:
    """Each path once, the modes taking turns (the reduced form the test suite runs)."""
    return [(path, MODES[(index + offset) % len(MODES)]) for index, path in enumerate(PATHS)]


def sweep(base: Path, *, secrets: list[str], combinations: list[tuple[str, str]]) -> tuple[int, list[Leak]]:
    """Run each (path, mode) for each kind of secret; return how many runs were tried and every leak seen."""
    leaks: list[Leak] = []
    tried = 0
    for kind in secrets:
        value = SECRETS[kind]()
        pieces = secret_pieces(value)
        project = write_project(base / kind / "project", SWEEP_CONFIG)
        home = base / kind / "home"
        for path, mode in combinations:
            tried += 1
            result = run_path(project, home, value, path, mode)
            for where, text in (("stdout", result.stdout), ("stderr", result.stderr)):
                leaks.extend(Leak(kind, path, mode, where, piece) for piece in pieces if piece in text)
            if mode == "json" and path not in FAILING and not _one_document(result.stdout):
                leaks.append(Leak(kind, path, mode, "stdout beside the JSON document", result.stdout[-60:]))
            shown = path in SHOWN_IN_JSON if mode == "json" else path != "result"
            if shown and "***" not in result.stdout + result.stderr:
                leaks.append(Leak(kind, path, mode, "nowhere (nothing was masked: the path did not run)", ""))
        for file, data in stored_files(project / ".rig", home).items():
            leaks.extend(Leak(kind, "*", "*", str(file), piece) for piece in pieces if piece.encode() in data)
    return tried, leaks


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        tried, leaks = sweep(Path(directory), secrets=list(SECRETS), combinations=every_combination())
    for leak in leaks:
        print(leak)
    print(f"{tried} combinations tried, {len(leaks)} leaks")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "MODES",
    "PATHS",
    "SECRETS",
    "SWEEP_CONFIG",
    "Leak",
    "every_combination",
    "one_mode_each",
    "secret_pieces",
    "sweep",
]
