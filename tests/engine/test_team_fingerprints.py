"""What two teammates' clones share through one state: provider fingerprints hold nothing per-user,
except a ``secret()``'s keyed hash, whose key is per user unless the team sets RIG_FINGERPRINT_KEY."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.support import EngineProject, reason_codes, run_async
from tests.engine.test_engine_behaviour import SECRET_CONFIG
from tests.fakes import FakeWorkflowProvider


async def _as_user(project: EngineProject, home: Path, **env: str) -> Any:
    """An engine as one teammate: a RIG_HOME (and so a fingerprint key file) of their own."""
    return await project.loaded(
        env={"RIG_HOME": str(home), "RIG_HOST_STORAGE_DIR": str(home / "providers"), **env},
        provider_factory=lambda setup: FakeWorkflowProvider(),
    )


@run_async
async def test_a_secret_bearing_provider_is_per_user_unless_the_team_shares_a_fingerprint_key(
    project: EngineProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write_config(SECRET_CONFIG)
    monkeypatch.delenv("RIG_FINGERPRINT_KEY", raising=False)
    alice = await _as_user(project, tmp_path / "alice", RIG_SECRET_TOKEN="team-token")
    await alice.planner.apply()
    bob = await _as_user(project, tmp_path / "bob", RIG_SECRET_TOKEN="team-token")
    assert await reason_codes(bob) == {"touch": "provider-changed"}  # same secret, another user's key

    shared = {"RIG_SECRET_TOKEN": "team-token", "RIG_FINGERPRINT_KEY": "the team's key"}
    alice = await _as_user(project, tmp_path / "alice", **shared)
    await alice.planner.apply()
    bob = await _as_user(project, tmp_path / "bob", **shared)
    assert await reason_codes(bob) == {"touch": "cached"}
    changed = await _as_user(project, tmp_path / "bob", **{**shared, "RIG_SECRET_TOKEN": "rotated"})
    assert await reason_codes(changed) == {"touch": "provider-changed"}  # a changed secret still busts it
