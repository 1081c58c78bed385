"""Plain run output: interactions, log streams, provider events and failures, all on stderr."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.cli.cli_support import EVENTS_CONFIG, RIG, env_with_rig, run_rig, write_project


def test_plain_lines_for_interactions_logs_and_failures(tmp_path: Path) -> None:
    # Interactions need a user, so this runs in a terminal, with the plain renderer and no colour.
    project = write_project(tmp_path / "events", EVENTS_CONFIG)
    child = pexpect.spawn(
        RIG,
        ["apply"],
        cwd=str(project),
        env=env_with_rig({"RIG_RENDER": "0", "TERM": "xterm"}),
        encoding="utf-8",
        dimensions=(40, 200),
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    lines = str(child.before).replace("\r\n", "\n").splitlines()
    assert "  → waiting on Example login" in lines
    assert "    https://example.invalid/login" in lines
    assert "    approve the request" in lines
    assert "  ✓ Example login completed" in lines
    assert "    sign-in | vm.created vm_id=vm-1" in lines
    assert "    sign-in | ! careful now" in lines
    assert not any("hidden detail" in line for line in lines)
    assert "    boom | about to fail" in lines
    assert any(line.startswith("  ✗ boom  failed") and "the disk is full" in line for line in lines)
    assert lines[-1].startswith("error: ") and "the disk is full" in lines[-1]
    assert "Traceback" not in child.before


def test_an_interaction_without_a_terminal_fails_clearly(tmp_path: Path) -> None:
    project = write_project(tmp_path / "events", EVENTS_CONFIG)
    result = run_rig("apply", cwd=project)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert "    sign-in | ! careful now" in lines and "  → waiting on Example login" in lines
    assert lines[-1].startswith('error: Interaction "Example login" needs a user at a terminal')


def test_debug_lines_only_with_rig_debug(tmp_path: Path) -> None:
    project = write_project(tmp_path / "events", EVENTS_CONFIG)
    result = run_rig("apply", cwd=project, env={"RIG_DEBUG": "1"})
    assert "    sign-in | debug hidden detail" in result.stderr.splitlines()


def test_json_mode_keeps_progress_off_both_streams(tmp_path: Path) -> None:
    project = write_project(tmp_path / "events", EVENTS_CONFIG)
    result = run_rig("apply", "--json", cwd=project)
    assert result.returncode == 1
    assert result.stdout == ""
    # Only what the task printed (after its path) reaches stderr, then the one error line.
    first, last = result.stderr.splitlines()
    assert first == "sign-in | ! careful now"
    assert result.stderr.count("\n") == 2 and last.startswith("error: ")


def test_an_interaction_in_a_sync_create_hook_is_shown_and_waited_for(tmp_path: Path) -> None:
    # The hook runs on a thread while the runner waits, with no event loop (speed/coroutines.py):
    # the interaction gets a loop of its own there, and is shown and completed as under apply.
    tasks = 'workflows = app.sequence("events").task("sign-in", sign_in).task("boom", boom)'
    assert tasks in EVENTS_CONFIG
    forking = """
def prepare(step):
    return {"ctx": {}}


def create(workflow, fake):
    fake.login()
    return {"signed_in": True}


workflows = app.sequence("events").task("prepare", prepare).workspace(create=create)
"""
    project = write_project(tmp_path / "events", EVENTS_CONFIG.replace(tasks, forking))
    child = pexpect.spawn(
        RIG,
        ["fork", "ws"],
        cwd=str(project),
        env=env_with_rig({"RIG_RENDER": "0", "TERM": "xterm"}),
        encoding="utf-8",
        dimensions=(40, 200),
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    lines = str(child.before).replace("\r\n", "\n").splitlines()
    assert child.exitstatus == 0, lines
    assert any(line.strip() == "→ waiting on Example login" for line in lines), lines
    assert any(line.strip() == "✓ Example login completed" for line in lines), lines
    assert any("vm.created vm_id=vm-1" in line for line in lines), lines
    assert "Traceback" not in child.before
    listed = run_rig("--json", "ls", cwd=project, subprocess=True)
    [workflow] = listed.json["workflows"]
    assert [(item["name"], item["status"], item["ctx"]) for item in workflow["workspaces"]] == [
        ("ws", "ready", {"signed_in": True})
    ]
