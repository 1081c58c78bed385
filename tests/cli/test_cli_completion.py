"""Completion: the scripts in completions/ match `rig completion`, the endpoint's answers, and real shells."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import COMPLETIONS, DEV_CONFIG, env_with_rig, run_rig, write_project

SHELLS = ("bash", "zsh", "fish")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The dev project, applied, with workspaces dev and dev2 (module-wide: forking is the slow part)."""
    home = tmp_path_factory.mktemp("completion-home")
    env = {"RIG_HOME": str(home), "RIG_HOST_STORAGE_DIR": str(home / "providers"), "NO_COLOR": "1"}
    directory = write_project(tmp_path_factory.mktemp("completion") / "project", DEV_CONFIG)
    for name in ("dev", "dev2"):
        result = run_rig("fork", name, cwd=directory, env=env)
        assert result.returncode == 0, result
    yield directory


def complete(project: Path, *words: str, shell: str = "zsh") -> list[str]:
    result = run_rig("__complete", "--shell", shell, "--index", str(len(words) - 1), "--", *words, cwd=project)
    assert result.returncode == 0 and result.stderr == "", result
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


@pytest.mark.parametrize("shell", SHELLS)
def test_scripts_are_generated_from_the_cli(tmp_path: Path, shell: str) -> None:
    result = run_rig("completion", shell, cwd=tmp_path)
    assert result.returncode == 0, result
    committed = (COMPLETIONS / f"rig.{shell}").read_text()
    assert result.stdout == committed, (
        f"completions/rig.{shell} is stale; regenerate it with: rig completion {shell} > completions/rig.{shell}"
    )


def test_default_shell_comes_from_SHELL(tmp_path: Path) -> None:
    fish = run_rig("completion", cwd=tmp_path, env={"SHELL": "/usr/bin/fish"})
    assert fish.stdout == (COMPLETIONS / "rig.fish").read_text()
    unknown = run_rig("completion", "tcsh", cwd=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr == "error: Unsupported shell tcsh. Expected bash, fish, or zsh.\n"


def test_endpoint_format(tmp_path: Path) -> None:
    result = run_rig("__complete", "--shell", "zsh", "--index", "1", "--", "rig", "v", cwd=tmp_path)
    assert result.stdout == "version\tPrint the version.\n"
    bash = run_rig("__complete", "--shell", "bash", "--index", "1", "--", "rig", "ver", cwd=tmp_path)
    assert bash.stdout == "version\n"


def test_outside_a_project_dynamic_completion_is_silent(tmp_path: Path) -> None:
    for words in (["rig", "op", ""], ["rig", "rm", ""], ["rig", "--workflow", ""], ["rig", "cache", "invalidate", ""]):
        result = run_rig("__complete", "--shell", "bash", "--index", str(len(words) - 1), "--", *words, cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_broken_config_completes_silently(tmp_path: Path) -> None:
    write_project(tmp_path, "print('noise')\nraise SystemExit(5)\n")
    result = run_rig("__complete", "--shell", "zsh", "--index", "2", "--", "rig", "op", "", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / ".rig").exists()


def test_endpoint_candidates(project: Path) -> None:
    assert complete(project, "rig", "op", "") == ["dev", "dev2", "status"]
    assert complete(project, "rig", "op", "dev", "") == ["test", "greet", "pair", "noop", "remove"]
    assert complete(project, "rig", "op", "dev/g") == ["dev/greet"]
    assert complete(project, "rig", "op", "dev", "test", "--") == ["--bail", "--retries", "--scope", "--help"]
    assert complete(project, "rig", "op", "dev", "test", "--bail", "--r") == ["--retries"]
    assert complete(project, "rig", "op", "dev", "greet", "bob", "--tone", "") == ["warm", "dry"]
    assert complete(project, "rig", "op", "dev", "pair", "--other", "") == ["dev", "dev2"]
    assert complete(project, "rig", "rm", "") == ["dev", "dev2"]
    assert complete(project, "rig", "--workflow", "") == ["dev"]
    assert complete(project, "rig", "plan", "--workflow=") == ["--workflow=dev"]
    assert sorted(complete(project, "rig", "cache", "invalidate", "")) == ["base", "tools"]
    assert complete(project, "rig", "cache", "") == ["ls", "explain", "invalidate", "clear"]
    assert "--yes" in complete(project, "rig", "cache", "clear", "-")  # asks like invalidate --all
    assert "--help" in complete(project, "rig", "op", "--")  # lists the project's operations
    assert complete(project, "rig", "ls", "") == ["workspaces", "snapshots", "config"]
    assert complete(project, "rig", "state", "") == ["copy", "check", "recover"]
    assert "--to" in complete(project, "rig", "state", "copy", "-")
    assert complete(project, "rig", "completion", "") == ["bash", "zsh", "fish", "install"]
    assert "local" in complete(project, "rig", "providers", "")
    assert "--workflow" in complete(project, "rig", "fork", "")
    assert complete(project, "rig", "-C", str(project), "rm", "d") == ["dev", "dev2"]


def test_bash_splits_option_values_at_equals(project: Path) -> None:
    words = ["rig", "plan", "--workflow", "=", ""]
    result = run_rig("__complete", "--shell", "bash", "--index", "4", "--", *words, cwd=project)
    assert result.stdout == "dev\n"


# -- real shells -----------------------------------------------------------------------------


def bash_complete(project: Path, words: list[str]) -> list[str]:
    script = (
        f"source {shlex.quote(str(COMPLETIONS / 'rig.bash'))}\n"
        f"COMP_WORDS=({' '.join(shlex.quote(word) for word in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_rig_complete\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    completed = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        cwd=project,
        env=env_with_rig(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return [line for line in completed.stdout.splitlines() if line]


def fish_complete(project: Path, line: str) -> list[str]:
    script = f"source {shlex.quote(str(COMPLETIONS / 'rig.fish'))}; complete -C {shlex.quote(line)}"
    completed = subprocess.run(
        ["fish", "--no-config", "-c", script],
        cwd=project,
        env=env_with_rig(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return [entry.split("\t")[0] for entry in completed.stdout.splitlines() if entry]


def zsh_complete(project: Path, line: str, expected: list[str], timeout: float = 20) -> str:
    """Type ``line`` and Tab in a real zsh inside tmux; return the screen once every name shows."""
    socket = f"rig-test-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = env_with_rig({"TERM": "xterm"})
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", "200", "-y", "50", "-c", str(project), "zsh", "-f"], env=env, check=True
    )
    try:
        setup = f"autoload -Uz compinit && compinit -u -D && source {shlex.quote(str(COMPLETIONS / 'rig.zsh'))}"
        subprocess.run([*tmux, "send-keys", "-t", "0", setup, "Enter"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", "0", "clear", "Enter"], check=True)
        time.sleep(0.3)
        subprocess.run([*tmux, "send-keys", "-t", "0", line, "Tab"], check=True)
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "0"], capture_output=True, text=True).stdout
            if all(name in screen for name in expected):
                return screen
            time.sleep(0.2)
        return screen
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


needs = {
    shell: pytest.mark.skipif(shutil.which(shell) is None, reason=f"{shell} is not installed")
    for shell in ("bash", "fish", "zsh", "tmux")
}


@needs["bash"]
def test_bash(project: Path) -> None:
    assert "--workflow" in bash_complete(project, ["rig", "fork", "--"])
    assert bash_complete(project, ["rig", "op", ""]) == ["dev", "dev2", "status"]
    assert bash_complete(project, ["rig", "op", "dev", ""]) == ["test", "greet", "pair", "noop", "remove"]
    assert sorted(bash_complete(project, ["rig", "cache", "invalidate", ""])) == ["base", "tools"]
    assert bash_complete(project, ["rig", "pl"]) == ["plan"]


@needs["fish"]
def test_fish(project: Path) -> None:
    assert "--workflow" in fish_complete(project, "rig fork --")
    assert fish_complete(project, "rig op ") == ["dev", "dev2", "status"]
    assert sorted(fish_complete(project, "rig op dev ")) == ["greet", "noop", "pair", "remove", "test"]
    assert sorted(fish_complete(project, "rig cache invalidate ")) == ["base", "tools"]


@needs["zsh"]
@needs["tmux"]
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("rig fork --", ["--workflow", "--json", "--help"]),
        ("rig op ", ["dev2", "status", "workspace (dev)", "show the prepared context"]),
        ("rig op dev ", ["test", "greet", "pair", "noop", "remove", "run the tests"]),
        ("rig cache invalidate ", ["base", "tools", "cached task"]),
    ],
)
def test_zsh(project: Path, line: str, expected: list[str]) -> None:
    screen = zsh_complete(project, line, expected)
    for name in expected:
        assert name in screen, screen
