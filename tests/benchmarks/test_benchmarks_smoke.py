"""Smoke test of the benchmark suite: a quick run of two cheap cases yields one well-formed JSON document."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from rigcli._version import __version__

REPO_ROOT = Path(__file__).resolve().parents[2]
CASES = ("version", "plan-noop")


def test_a_quick_json_run_reports_every_selected_case_with_numeric_ratios(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "benchmarks", "--quick", "--json", "--workdir", str(tmp_path)]
    for case in CASES:
        argv += ["--case", case]
    done = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,  # the first run on a machine installs rig's dependencies into a venv of its own
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout is the one document; progress goes to stderr

    assert set(report) == {"machine", "options", "rows", "elapsed_s"}
    assert report["options"]["quick"] is True and report["options"]["cases"] == list(CASES)
    # Timed as users install it: a regular install in a venv of its own, not the rig beside this interpreter.
    assert report["options"]["rig"] == "regular"
    [timed] = report["machine"]["installs"]
    assert timed["install"] == "regular" and timed["rig"] == __version__
    rig_bin = Path(timed["rig_command"]).parent
    assert rig_bin != Path(sys.executable).parent
    assert timed["python"].endswith(f"({rig_bin / 'python'})")
    assert isinstance(report["machine"]["cores"], int) and report["machine"]["python"]
    assert [row["case"] for row in report["rows"]] == list(CASES)
    assert {row["install"] for row in report["rows"]} == {"regular"}
    for row in report["rows"]:
        # Timings are the machine's business; the shape and the arithmetic are ours.
        assert row["status"] in {"pass", "fail"}, row
        assert isinstance(row["ratio"], (int, float)) and math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert row["target"].startswith("≤")
        for side in (row["rig"], row["baseline"]):
            assert set(side) == {"command", "median_s", "samples_s", "peak_rss_mb"}
            assert len(side["samples_s"]) == report["options"]["repeat"]
            assert isinstance(side["median_s"], (int, float)) and side["peak_rss_mb"] > 0
    assert list(tmp_path.iterdir()) == []  # fixtures are removed after the run
