"""Statuses and reason codes are spelled once (rigcli/statuses.py): a typo is a mypy error, values never change."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rigcli import statuses
from rigcli.cachekeys import reason

REPO = Path(__file__).resolve().parents[1]


def test_every_reason_code_has_one_message_and_every_message_a_code() -> None:
    assert len(set(statuses.REASON_CODES)) == len(statuses.REASON_CODES)
    assert list(statuses.REASON_MESSAGES) == list(statuses.REASON_CODES)  # same codes, in the same order
    assert all(reason(code).message == statuses.REASON_MESSAGES[code] for code in statuses.REASON_CODES)


def test_stored_and_shown_values_never_change() -> None:
    # These strings are in existing databases and in scripts reading --json output: add, never rename.
    assert statuses.RUN_STATUSES[:4] == ("running", "succeeded", "failed", "interrupted")
    assert {"succeeded", "failed", "interrupted"} <= statuses.FINISHED_STATUSES
    assert "running" not in statuses.FINISHED_STATUSES
    assert statuses.WORKSPACE_STATUSES[:4] == ("creating", "ready", "failed", "removing")
    assert statuses.EFFECT_STATUSES[:3] == ("requested", "confirmed", "deleted")
    assert statuses.REASON_CODES[:11] == (
        "cached",
        "no-previous-run",
        "task-changed",
        "provider-changed",
        "upstream-changed",
        "invalidated",
        "expired",
        "output-schema-invalid",
        "artifact-invalid",
        "upstream-pending",
        "in-doubt",
    )


TYPOS = """
from dataclasses import replace

from rigcli.cachekeys import reason
from rigcli.engine.results import PlanNode
from rigcli.records import NodeRun, WorkspaceRecord
from rigcli.state.api import StateStore
from rigcli.state.workspaces import new_workspace


def typos(store: StateStore, run: NodeRun, record: WorkspaceRecord, node: PlanNode) -> None:
    reason("no-previous-run")  # fine
    reason("no-previos-run")  # TYPO
    new_workspace("a", "b", status="redy")  # TYPO
    store.finish_run("x", status="succeeded")  # fine
    store.finish_run("x", status="succeded")  # TYPO
    store.list_runs(statuses=["runing"])  # TYPO
    store.list_effects(statuses=["confirmd"])  # TYPO
    replace(record, status="removing")  # fine
    if run.status == "interupted":  # TYPO
        pass
    if node.status == "cahced":  # TYPO
        pass
"""


def test_a_misspelt_status_or_reason_code_is_a_mypy_error(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent(TYPOS).lstrip(), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "pyproject.toml"),  # the repo's own settings, strict_equality included
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(probe),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    flagged = {int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line}
    lines = probe.read_text(encoding="utf-8").splitlines()
    typos = {number for number, line in enumerate(lines, start=1) if line.endswith("# TYPO")}
    assert flagged == typos, done.stdout + done.stderr
