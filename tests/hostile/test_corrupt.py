"""A damaged state database, met by the common commands: never exit 3, never a write into it; then recovered.

``RIG_HOSTILE_DAMAGES`` damaged databases (default 2, at random pages and offsets) x every command
of ``COMMANDS``; ``python3 -m tests.hostile corrupt --databases 20`` runs the same on its own, with figures.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.hostile.corrupt import COMMANDS, CorruptProject

DAMAGES = int(os.environ.get("RIG_HOSTILE_DAMAGES", "2"))
SEED = int(os.environ.get("RIG_HOSTILE_SEED", str(random.randrange(1 << 30))))


@pytest.fixture(scope="module")
def corrupt_project(tmp_path_factory: pytest.TempPathFactory) -> CorruptProject:
    return CorruptProject(Path(tmp_path_factory.mktemp("corrupt")))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("index", range(DAMAGES))
def test_commands_on_a_damaged_database_never_exit_3_or_write_into_it(
    corrupt_project: CorruptProject, index: int
) -> None:
    damages = corrupt_project.damages(DAMAGES, random.Random(SEED))
    assert len(damages) == DAMAGES, f"seed {SEED}: only {len(damages)} damages SQLite detects"
    outcomes = corrupt_project.sweep(damages[index], COMMANDS)
    bad = [outcome for outcome in outcomes if not outcome.clean]
    assert bad == [], f"seed {SEED}, {damages[index]}: {bad}"
    refused = [outcome for outcome in outcomes if outcome.exit_code == 1]
    assert all("is damaged (" in outcome.error for outcome in refused), f"seed {SEED}: {refused}"
    recovery = corrupt_project.recover(damages[index])
    assert recovery.clean, f"seed {SEED}: {recovery}"
