"""A rig_config.py that fails to import does not lock the user out of what only the state holds:
``rig runs`` and ``rig logs`` answer from it (saying the config does not load); commands that run
the config still fail on it, naming its file and line."""

from __future__ import annotations

import sqlite3
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


def test_rm_refuses_without_forget_and_forget_removes_the_machine_when_the_config_does_not_import(
    started: Path,
) -> None:
    machines = started / ".rig" / "machines"
    [machine] = list(machines.iterdir())
    where = str(_broken(started))

    refused = run_rig("rm", "demo", "--yes", cwd=started, subprocess=True)
    assert refused.returncode == 1, refused
    [line] = refused.error_lines
    assert where in line and "SyntaxError" in line and "rig rm --forget demo" in line, refused
    assert machine.exists() and "Traceback" not in refused.stderr, refused
    kept = run_rig("--json", "ls", "--no-probe", cwd=started, subprocess=True)
    assert [w["name"] for w in kept.json["workflows"][0]["workspaces"]] == ["demo"], kept

    unasked = run_rig("rm", "demo", "--forget", cwd=started, subprocess=True)  # no terminal, no --yes
    assert unasked.returncode == 1 and machine.exists(), unasked

    forgot = run_rig("--json", "rm", "demo", "--forget", "--yes", cwd=started, subprocess=True)
    assert forgot.returncode == 0, forgot
    assert (forgot.json["name"], forgot.json["status"]) == ("demo", "removed"), forgot
    assert not machine.exists() and where in forgot.stderr, forgot
    gone = run_rig("--json", "ls", "--no-probe", cwd=started, subprocess=True)
    assert gone.json["workflows"] == [] or gone.json["workflows"][0]["workspaces"] == [], gone
    again = run_rig("rm", "demo", "--forget", "--yes", cwd=started, subprocess=True)
    assert again.returncode == 1 and 'Unknown workspace "demo"' in again.stderr, again


def test_rm_forget_skips_the_remove_hook_of_a_config_that_loads(started: Path) -> None:
    config = started / "rig_config.py"
    marker = started / "hook-ran"
    hook = "def remove(workspace, box):\n"
    assert hook in config.read_text()
    config.write_text(config.read_text().replace(hook, f"{hook}    open({str(marker)!r}, 'w').close()\n"))
    assert run_rig("--json", "ls", "--no-probe", cwd=started).returncode == 0  # the config loads
    machines = started / ".rig" / "machines"
    forgot = run_rig("rm", "demo", "--forget", "--yes", cwd=started, subprocess=True)
    assert forgot.returncode == 0, forgot
    assert not marker.exists() and list(machines.iterdir()) == [], forgot


def test_gc_works_from_the_journal_when_the_config_does_not_import(started: Path) -> None:
    assert run_rig("fork", "orphan", cwd=started).returncode == 0
    machines = started / ".rig" / "machines"
    assert len(list(machines.iterdir())) == 2
    with sqlite3.connect(started / ".rig" / "state.sqlite") as db:  # a record lost, its machine journaled
        db.execute("DELETE FROM workspaces WHERE name = 'orphan'")
    snapshots = sorted((started / ".rig" / "snapshots").iterdir())
    where = str(_broken(started))

    preview = run_rig("--json", "gc", "--dry-run", cwd=started, subprocess=True)
    assert preview.returncode == 0, preview
    assert [item["kind"] for item in preview.json["removed"]] == ["machine"], preview
    assert where in preview.json["skipped"] and len(list(machines.iterdir())) == 2, preview

    collected = run_rig("gc", cwd=started, subprocess=True)
    assert collected.returncode == 0, collected
    warnings = [line for line in collected.stderr.splitlines() if where in line]
    assert len(warnings) == 1 and "unjournaled" in warnings[0], collected
    assert len(list(machines.iterdir())) == 1, collected  # demo's machine stays
    assert sorted((started / ".rig" / "snapshots").iterdir()) == snapshots, collected


def test_state_commands_do_not_import_the_config(started: Path) -> None:
    _broken(started)
    checked = run_rig("--json", "state", "check", cwd=started, subprocess=True)
    assert checked.returncode == 0 and checked.json["ok"] is True, checked
    copied = run_rig("state", "copy", "--to", str(started / "copy.sqlite"), cwd=started, subprocess=True)
    assert copied.returncode == 0 and (started / "copy.sqlite").exists(), copied
    recovered = run_rig("state", "recover", cwd=started, subprocess=True)
    assert recovered.returncode == 0 and "nothing to recover" in recovered.stderr, recovered
    listed = run_rig("--state", str(started / "copy.sqlite"), "runs", cwd=started, subprocess=True)
    assert listed.returncode == 0 and "succeeded" in listed.stdout, listed


def test_a_workspace_of_a_workflow_the_config_no_longer_defines_is_removed_with_forget(started: Path) -> None:
    config = started / "rig_config.py"
    config.write_text(
        config.read_text().replace('workflow("dev"', 'workflow("renamed"').replace('"dev")', '"renamed")')
    )
    refused = run_rig("rm", "demo", "--yes", cwd=started, subprocess=True)
    assert refused.returncode == 1 and "rig rm --forget demo" in refused.stderr, refused
    forgot = run_rig("rm", "demo", "--forget", "--yes", cwd=started, subprocess=True)
    assert forgot.returncode == 0 and list((started / ".rig" / "machines").iterdir()) == [], forgot
