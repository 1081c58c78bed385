"""The apply-postgres row's probe: inside a real rig process, what PostgreSQL state costs, rig's behaviour unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.postgres_probe import MARKER
from tests.cli.cli_support import write_project

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "postgres_probe.py"
CHAIN = """
from rigcli import sequence


def noop(step):
    return None


workflows = sequence("chain").task("one", noop).task("two", noop).task("three", noop)
"""


def _probe(project: Path, url: str, home: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, float]]:
    env = {**os.environ, "RIG_HOME": str(home), "RIG_RENDER": "0"}
    done = subprocess.run(
        [sys.executable, "-I", str(PROBE), "-C", str(project), "--state", url, "apply"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    [line] = [line for line in done.stderr.splitlines() if line.startswith(MARKER)]
    return done, json.loads(line[len(MARKER) :])


def test_the_probe_times_the_driver_and_counts_what_a_no_op_apply_sends(tmp_path: Path, postgres_server: Any) -> None:
    from tests.pg_server import unique_schema

    schema = unique_schema()
    url = str(postgres_server.url(schema, fragments_schema=f"{schema}_fragments"))
    project = write_project(tmp_path / "project", CHAIN)
    first, migrating = _probe(project, url, tmp_path / "home")
    again, no_op = _probe(project, url, tmp_path / "home")
    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    assert "ran 3" in first.stdout + first.stderr and "3 cached" in again.stdout + again.stderr  # as without the probe
    for spent in (migrating, no_op):
        assert spent["import_ms"] > 0 and spent["connect_ms"] > 0 and spent["statements_ms"] > 0, spent
    assert migrating["statements"] > no_op["statements"]  # the first one created the schema
    # A current schema: one statement opens it, the lock is taken in three and released in two,
    # and the apply reads and records its run; what used to be 26 statements is 19.
    assert no_op["statements"] <= 19, no_op
