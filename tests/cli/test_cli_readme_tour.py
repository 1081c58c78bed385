"""The README's five-minute tour, run as written: each `$ command` of its blocks through a shell in an
empty directory, and what it prints compared with the lines the README shows under it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_support import REPO_ROOT, env_with_rig

README = REPO_ROOT / "README.md"
TOUR_DIR = "/tmp/tour"  # the directory the README's lines name
# What differs from one run to the next, each made the same on both sides before comparing.
VARYING = [
    (re.compile(r"\b([ms])-[0-9a-f]{12}\b"), r"\1-ID"),
    (re.compile(r"\brun [0-9a-f]{8}\b"), "run ID"),
    (re.compile(r"\b\d+\.\d+s\b"), "N.Ns"),
    (re.compile(r"\b\S+@\S+(?=\s+just now)"), "USER@HOST"),
]


def tour_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    tour = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    return [block for block in re.findall(r"\n```\n(.*?)\n```", tour, re.S) if block.startswith("$ ")]


def commands_and_output(block: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def normal(line: str, directory: Path) -> str:
    line = line.replace(str(directory), TOUR_DIR).rstrip()
    for pattern, replacement in VARYING:
        line = pattern.sub(replacement, line)
    return line


def matches(expected: list[str], printed: list[str]) -> bool:
    """A README line ending in "…" stands for any line it begins; a line of only "…" for any lines."""
    if not expected:
        return not printed
    head, rest = expected[0], expected[1:]
    if head == "…":
        return any(matches(rest, printed[skip:]) for skip in range(len(printed) + 1))
    if not printed:
        return False
    same = printed[0].startswith(head[:-1].rstrip()) if head.endswith("…") else printed[0] == head
    return same and matches(rest, printed[1:])


def test_the_readme_tour_prints_what_the_readme_shows(tmp_path: Path) -> None:
    directory = tmp_path / "tour"
    directory.mkdir()
    subprocess.run(["git", "init", "-q", str(directory)], check=True, timeout=30)
    blocks = tour_blocks()
    assert len(blocks) >= 6, "the README's tour lost its blocks"
    compared = plans = 0
    for block in blocks:
        for command, shown in commands_and_output(block):
            if command.startswith("rig plan"):
                plans += 1
            if command.startswith("rig plan") and plans == 2:
                # Between its two plans the tour edits the task's echo ("Change the task").
                config = directory / "rig_config.py"
                config.write_text(config.read_text(encoding="utf-8").replace("hello from rig", "hello, changed"))
            completed = subprocess.run(
                ["bash", "-c", f"{command} 2>&1"],
                cwd=directory,
                capture_output=True,
                text=True,
                env=env_with_rig({"RIG_RENDER": "0", "NO_COLOR": "1"}),
                timeout=120,
            )
            printed = [normal(line, directory) for line in completed.stdout.splitlines()]
            expected = [normal(line, directory) for line in shown]
            assert matches(expected, printed), (
                f"$ {command}\nREADME:\n" + "\n".join(expected) + "\nprinted:\n" + "\n".join(printed)
            )
            compared += 1
    assert compared >= 10


@pytest.mark.parametrize(
    ("expected", "printed", "same"),
    [
        (["a", "b…"], ["a", "bc"], True),
        (["a", "…"], ["a", "x", "y"], True),
        (["a", "…", "z"], ["a", "x", "z"], True),
        (["a"], ["a", "extra"], False),
        (["a", "b"], ["a", "c"], False),
    ],
)
def test_the_tour_comparison_fails_on_a_differing_line(expected: list[str], printed: list[str], same: bool) -> None:
    assert matches(expected, printed) is same
