"""A rig_config.py that fails to import does not lock the user out of what only the state holds:
``rig runs`` and ``rig logs`` answer from it (saying the config does not load); commands that run
the config still fail on it, naming its file and line."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import run_rig


def _broken(started: Path) -> Path:
    config = started / "rig_config.py"
    line = len(config.read_text().splitlines()) + 1
    config.write_text(config.read_text() + "x = (\n")
    return started / f"rig_config.py:{line}"


def test_runs_and_logs_answer_from_the_state_when_the_config_does_not_import(started: Path) -> None:
    where = str(_broken(started))

    runs = run_rig("runs", cwd=started, subprocess=True)
    assert runs.returncode == 0, runs
    assert "succeeded" in runs.stdout and where in runs.stderr, runs
    as_json = run_rig("--json", "runs", cwd=started, subprocess=True)
    assert as_json.returncode == 0, as_json
    assert {item["status"] for item in as_json.json["runs"]} == {"succeeded"}  # apply, and fork's
    assert run_rig("--workflow", "dev", "runs", cwd=started, subprocess=True).returncode == 0

    logs = run_rig("logs", "prepare", cwd=started, subprocess=True)
    assert logs.returncode == 0 and "hello from rig" in logs.stdout, logs
    whole = run_rig("logs", cwd=started, subprocess=True)
    assert whole.returncode == 0 and "==> prepare" in whole.stdout, whole
    stored = run_rig("--json", "logs", "prepare", cwd=started, subprocess=True)
    assert (stored.returncode, stored.json["node_path"], stored.json["status"]) == (0, "prepare", "succeeded")
    missing = run_rig("logs", "nope", cwd=started, subprocess=True)
    assert missing.returncode == 1 and "nope" in missing.stderr and "Traceback" not in missing.stderr, missing

    planned = run_rig("plan", cwd=started, subprocess=True)  # what runs the config still needs it
    assert planned.returncode == 1 and where in planned.stderr and "SyntaxError" in planned.stderr, planned


def test_ls_no_probe_lists_the_workspaces_the_state_holds_when_the_config_does_not_import(started: Path) -> None:
    where = str(_broken(started))
    listed = run_rig("ls", "--no-probe", cwd=started, subprocess=True)
    assert listed.returncode == 0, listed
    assert "demo" in listed.stdout and where in listed.stderr, listed
    [workflow] = run_rig("--json", "ls", "--no-probe", cwd=started, subprocess=True).json["workflows"]
    assert workflow["name"] == "dev" and where in workflow["plan_error"], workflow
    assert [item["name"] for item in workflow["workspaces"]] == ["demo"]
    named = run_rig("--workflow", "dev", "--json", "ls", "--no-probe", cwd=started, subprocess=True)
    assert named.returncode == 0 and [w["name"] for w in named.json["workflows"]] == ["dev"], named
