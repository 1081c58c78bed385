"""Comparing what the commands that may answer from the cache print with and without it (tests/cache,
tests/providers/test_cache_parity_docker.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rigcli.cli.spec import Command
from rigcli.cli.table import COMMANDS
from tests.cli.cli_support import Result, run_rig

# Per command name (and so per row): the lines each state runs, with what goes to stdin.
LINES: dict[str, list[tuple[tuple[str, ...], str]]] = {
    "plan": [(("plan",), ""), (("--json", "plan"), ""), (("plan", "--detailed-exitcode"), "")],
    "graph": [(("graph",), ""), (("--json", "graph"), ""), (("graph", "--format", "mermaid"), "")],
    "ls": [(("ls",), ""), (("--json", "ls"), ""), (("ls", "--no-probe"), ""), (("--workflow", "dev", "ls"), "")],
    "exec": [(("exec", "ws", "--", "sh", "-c", "cat; echo out; echo err >&2; exit 3"), "from stdin\n")],
    "shell": [(("shell", "ws"), "echo in the shell; exit 4\n")],
    "logs": [(("logs", "build"), ""), (("logs", "stamp"), ""), (("logs", "nosuch"), "")],
    # the connect commands start a stopped workspace first: only lines that change nothing compare
    "cp": [(("cp", "nosuch:/x", "-"), ""), (("cp", "-", "nosuch:/x"), "")],
    "ssh-proxy": [(("ssh-proxy", "nosuch"), "")],
    "forward": [(("forward", "nosuch", "80"), "")],
}
ENV = {"RIG_RENDER": "0"}
# The daemon's own words for a container change by the second ("Up 4 seconds", "Exited (143) 3 seconds ago").
DAEMON_CLOCK = re.compile(r"(\d+|About an?|Less than a) (second|minute|hour)s?")
# A clock in a column ("9 seconds" then "10 seconds", "just now" then "1m ago") also changes how wide
# the table's rule is drawn and how far the cells are padded.
PADDING = [(re.compile(r" +$", re.M), ""), (re.compile(r"─+"), "─"), (re.compile(r" {2,}"), "  ")]
# A workspace's age in rig ls ("just now", "1m ago") changes when a minute passes between two runs.
AGE = re.compile(r"just now|\b\d+[mhd] ago")


def cached_rows(commands: tuple[Command, ...] = COMMANDS) -> Iterator[Command]:
    for command in commands:
        if command.cache:
            yield command
        yield from cached_rows(command.commands)


def rig(project: Path, *args: str, stdin: str = "", **env: str) -> Result:
    return run_rig(*args, cwd=project, env={**ENV, **env}, input=stdin, subprocess=True, timeout=90)


def loads(project: Path) -> int:
    path = project / "loads.txt"
    return path.read_text().count("loaded") if path.exists() else 0


def daemon_clock_free(text: str) -> str:
    text = DAEMON_CLOCK.sub("T", text)
    for pattern, replacement in PADDING:
        text = pattern.sub(replacement, text)
    return text


def compare(project: Path, env: dict[str, str], *, daemon_clock: bool = False) -> list[str]:
    """Every line of every cached row, both ways; what differed, said per line."""
    differences: list[str] = []
    for lines in LINES.values():
        for argv, stdin in lines:
            off = rig(project, *argv, stdin=stdin, RIG_CACHE="off", **env)
            first = rig(project, *argv, stdin=stdin, **env)
            second = rig(project, *argv, stdin=stdin, **env)
            seen = [
                (result.returncode, AGE.sub("AGE", result.stdout), AGE.sub("AGE", result.stderr))
                for result in (off, first, second)
            ]
            if daemon_clock:  # besides an age, only the daemon's own "N seconds" may differ between two runs
                seen = [(code, daemon_clock_free(out), daemon_clock_free(err)) for code, out, err in seen]
            if not seen[0] == seen[1] == seen[2]:
                differences.append(f"rig {' '.join(argv)}: off={seen[0]!r} computed={seen[1]!r} recalled={seen[2]!r}")
    return differences
