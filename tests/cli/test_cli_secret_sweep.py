"""A PEM key and a value ending in a newline, shown through every output path rig relays: never seen.

The sweep itself lives in ``secret_sweep.py`` (``python -m tests.cli.secret_sweep`` runs it whole).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import write_project
from tests.cli.secret_sweep import PATHS, SECRETS, one_mode_each, run_in_terminal, secret_pieces, sweep


@pytest.mark.parametrize(("kind", "offset"), [(kind, offset) for offset, kind in enumerate(sorted(SECRETS))])
def test_every_output_path_masks_every_line_of_the_secret(tmp_path: Path, kind: str, offset: int) -> None:
    # Each path in one way of running rig, the two kinds taking different ones; the script runs them all.
    tried, leaks = sweep(tmp_path, secrets=[kind], combinations=one_mode_each(offset))
    assert tried == len(PATHS)
    assert not leaks, "\n".join(map(str, leaks))


def test_the_pieces_of_a_secret_are_its_lines_and_the_value_without_surrounding_whitespace() -> None:
    assert secret_pieces("-----BEGIN K-----\nabcdefgh\nxy\n-----END K-----\n") == [
        "-----BEGIN K-----\nabcdefgh\nxy\n-----END K-----",
        "-----BEGIN K-----",
        "-----END K-----",
        "abcdefgh",
    ]


HOST_COMMAND_CONFIG = r"""
from rigcli import define_provider, define_config, secret, sequence


class Plugin:
    provider_id = "vault"

    def create_provider(self, setup):
        class Controller:
            provider_id = "vault"

            def runtime(self, context):
                return setup.config["token"]

        return Controller()


def login(step, local, vault):
    check = 'test -t 0 && test -t 1 && test -t 2 && echo "a terminal on 0, 1, 2"; echo "token $T"'
    code = local.run(["sh", "-c", check])
    assert code == 0


workflows = define_config(
    workflows=[sequence("login").task("login", login, cache_ttl=0)],
    providers={"vault": define_provider("vault", plugin=Plugin(), token=secret("T"))},
)
"""


def test_a_host_command_in_a_terminal_still_has_a_terminal_and_its_output_is_masked(tmp_path: Path) -> None:
    project = write_project(tmp_path / "login", HOST_COMMAND_CONFIG)
    token = "tok-" + "9f" * 12
    result = run_in_terminal("apply", cwd=project, env={"T": token, "RIG_TRUST_HOST_COMMANDS": "1"})
    assert result.returncode == 0, result
    assert "a terminal on 0, 1, 2" in result.stdout, result  # interactive commands (gh auth login) keep working
    assert "token ***" in result.stdout and token not in result.stdout, result
