"""A PEM key and a value ending in a newline, shown through every output path rig relays: never seen.

The sweep itself lives in ``secret_sweep.py`` (``python -m tests.cli.secret_sweep`` runs it whole).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.secret_sweep import MODES, PATHS, SECRETS, secret_pieces, sweep


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_every_output_path_masks_every_line_of_the_secret(tmp_path: Path, kind: str) -> None:
    tried, leaks = sweep(tmp_path, secrets=[kind], paths=PATHS, modes=MODES)
    assert tried == len(PATHS) * len(MODES)
    assert not leaks, "\n".join(map(str, leaks))


def test_the_pieces_of_a_secret_are_its_lines_and_the_value_without_surrounding_whitespace() -> None:
    assert secret_pieces("-----BEGIN K-----\nabcdefgh\nxy\n-----END K-----\n") == [
        "-----BEGIN K-----\nabcdefgh\nxy\n-----END K-----",
        "-----BEGIN K-----",
        "-----END K-----",
        "abcdefgh",
    ]
