"""``rig fork NAME --replace`` says what the live workspace would lose and asks first.

What was written in the workspace since it was made (local: files newer than the machine or
differing from its snapshot) is listed; a terminal is asked, ``--yes`` skips the question, and
without either rig exits 1 having changed nothing. A provider that cannot tell is said so, and
asked about the same way.
"""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project
from tests.cli.test_cli_gc import KIT_CONFIG


def _workspace(project: Path) -> dict[str, object]:
    [workflow] = run_rig("--json", "ls", "--no-probe", cwd=project).json["workflows"]
    [record] = workflow["workspaces"]
    return dict(record)


def _machine_dir(project: Path) -> Path:
    return Path(str(_workspace(project)["ctx"]["path"]))  # type: ignore[index]


def test_replace_off_a_terminal_without_yes_names_what_would_be_lost_and_changes_nothing(started: Path) -> None:
    machine = _machine_dir(started)
    (machine / "notes.txt").write_text("work in progress\n")
    (machine / "src" / "README").write_text("edited\n")
    before = _workspace(started)

    refused = run_rig("fork", "demo", "--replace", cwd=started, subprocess=True)
    assert refused.returncode == 1, refused
    assert "notes.txt" in refused.stderr and "src/README" in refused.stderr, refused
    assert "--yes" in refused.stderr and "Traceback" not in refused.stderr
    assert (machine / "notes.txt").read_text() == "work in progress\n"  # nothing changed
    assert _workspace(started) == before

    as_json = run_rig("--json", "fork", "demo", "--replace", cwd=started, subprocess=True)
    assert (as_json.returncode, as_json.stdout) == (1, ""), as_json
    assert (machine / "notes.txt").is_file()


def test_replace_with_yes_throws_the_changes_away(started: Path) -> None:
    machine = _machine_dir(started)
    (machine / "notes.txt").write_text("work in progress\n")
    done = run_rig("fork", "demo", "--replace", "--yes", cwd=started, subprocess=True)
    assert done.returncode == 0, done
    fresh = _machine_dir(started)
    assert fresh != machine and not machine.exists()
    assert not (fresh / "notes.txt").exists() and (fresh / "src" / "README").read_text() == "hello from rig\n"


def test_replace_of_an_untouched_workspace_asks_nothing(started: Path) -> None:
    done = run_rig("fork", "demo", "--replace", cwd=started, subprocess=True)
    assert done.returncode == 0, done


def test_a_deleted_file_is_a_loss_too(started: Path) -> None:
    machine = _machine_dir(started)
    (machine / "src" / "README").unlink()
    refused = run_rig("fork", "demo", "--replace", cwd=started, subprocess=True)
    assert refused.returncode == 1 and "src/README" in refused.stderr, refused


def _spawn(project: Path, *args: str) -> pexpect.spawn:
    env = env_with_rig({"TERM": "xterm"})
    return pexpect.spawn(RIG, list(args), cwd=str(project), env=env, encoding="utf-8", timeout=60)


def test_a_terminal_is_shown_the_changes_and_asked(started: Path) -> None:
    machine = _machine_dir(started)
    (machine / "notes.txt").write_text("work in progress\n")

    child = _spawn(started, "fork", "demo", "--replace")
    child.expect_exact("notes.txt")
    child.expect_exact("Replace workspace demo")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert (machine / "notes.txt").is_file()

    child = _spawn(started, "fork", "demo", "--replace")
    child.expect_exact("Replace workspace demo")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert not machine.exists()


def test_a_provider_that_cannot_tell_is_said_so_and_asked_about(tmp_path: Path) -> None:
    project = write_project(tmp_path / "kit", KIT_CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    refused = run_rig("fork", "dev", "--replace", cwd=project, subprocess=True)
    assert refused.returncode == 1, refused
    assert "cannot tell" in refused.stderr and "kit" in refused.stderr, refused
    assert run_rig("fork", "dev", "--replace", "--yes", cwd=project, subprocess=True).returncode == 0
