"""The apply-postgres row: rig on PostgreSQL against Terraform's pg backend, the ratio to SQLite beside it."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.postgres_cases import APPLY_POSTGRES, run_apply_postgres
from benchmarks.suite import Context

REPO_ROOT = Path(__file__).resolve().parents[2]


def _run_case(tmp_path: Path, **env: str) -> dict[str, Any]:
    """One quick run of the case, timing the rig beside this interpreter; fixtures kept for inspection."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    argv = [sys.executable, "-m", "benchmarks", "--json", "--quick", "--repeat", "1", "--warmup", "0"]
    argv += ["--rig", "editable", "--keep", "--workdir", str(workdir), "--case", "apply-postgres"]
    base = {key: value for key, value in os.environ.items() if key != "RIG_BENCH_POSTGRES_URL"}
    done = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _check_rows(report: dict[str, Any], workdir: Path, server: str) -> None:
    against_terraform, against_sqlite = report["rows"]
    assert {against_terraform["case"], against_sqlite["case"]} == {"apply-postgres"}
    assert against_terraform["target"] == "≤ 0.8" and against_sqlite["target"] == ""  # the second is information
    assert against_sqlite["baseline"]["command"] == "rig apply, SQLite"
    assert against_sqlite["note"].startswith("in rig: psycopg's import"), against_sqlite
    if shutil.which("terraform") is None:
        assert against_terraform["status"] == "skip" and "terraform" in against_terraform["note"]
        return
    assert against_terraform["status"] in {"pass", "fail"}, against_terraform
    assert against_terraform["baseline"]["command"] == "terraform apply, pg backend"
    assert against_terraform["note"] == f"on {server}"
    assert math.isfinite(against_terraform["ratio"]) and against_terraform["ratio"] > 0
    assert against_terraform["rig"] == against_sqlite["rig"]  # one rig series, measured interleaved with both
    # Terraform kept its state in PostgreSQL: its working directory knows the pg backend and has no state file.
    [module] = workdir.glob("rig-bench-*/*/tf-postgres")
    backend = json.loads((module / ".terraform" / "terraform.tfstate").read_text())["backend"]
    assert backend["type"] == "pg" and not (module / "terraform.tfstate").exists()


def test_on_a_given_server_the_row_measures_both_tools_there_and_drops_their_schemas(
    tmp_path: Path, postgres_server: Any
) -> None:
    report = _run_case(tmp_path, RIG_BENCH_POSTGRES_URL=postgres_server.admin_url())
    _check_rows(report, tmp_path / "work", "RIG_BENCH_POSTGRES_URL")
    schemas = postgres_server.sql("SELECT nspname FROM pg_catalog.pg_namespace")
    assert [name for (name,) in schemas if name.startswith(("rig_bench_", "tf_bench_"))] == []


def test_without_a_server_url_the_row_starts_one_for_the_run_and_stops_it(tmp_path: Path, postgres_server: Any) -> None:
    del postgres_server  # only its binaries and psycopg: where a test server starts, the benchmark's can
    # The server's own temp dir, which the postgres user must reach (pytest's tmp_path is root's alone).
    scratch = Path(tempfile.mkdtemp(prefix="rig-bench-tmp-"))
    scratch.chmod(0o755)
    try:
        report = _run_case(tmp_path, TMPDIR=str(scratch))
        _check_rows(report, tmp_path / "work", "a server started for this run")
        assert list(scratch.iterdir()) == []  # the private server's directory went with it
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_with_no_server_to_be_had_the_row_is_skipped_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tests.pg_server

    monkeypatch.delenv("RIG_BENCH_POSTGRES_URL", raising=False)
    monkeypatch.setattr(tests.pg_server, "find_bindir", lambda: None)  # a machine without PostgreSQL installed
    ctx = Context(root=tmp_path, quick=True, repeat=1, warmup=0, timeout=60, log=lambda message: None)
    [row] = run_apply_postgres(ctx, APPLY_POSTGRES)
    assert row.status == "skip"
    assert row.note == (
        "skipped: RIG_BENCH_POSTGRES_URL is not set, and no private server could start: "
        "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql or on PATH"
    )
    assert list(tmp_path.iterdir()) == []  # nothing was built for a row that cannot run
