"""Issue 30's usage edges through the installed rig: files the timeline would overwrite, absurd numbers
and durations, the --detailed-exitcode rule, run id prefixes, rm of several workspaces, and wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import DEV_CONFIG, Result, run_rig, write_project


def rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env={"NO_COLOR": "1", "RIG_RENDER": "0", **(env or {})}, subprocess=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "dev", DEV_CONFIG)


@pytest.fixture
def applied(project: Path) -> Path:
    result = rig(project, "apply")
    assert result.returncode == 0, result
    return project


# -- 3: rig runs --timeline --format svg FILE never overwrites by surprise ---------------------------------
def test_timeline_svg_refuses_an_existing_file_and_leaves_it_untouched(applied: Path) -> None:
    config = applied / "rig_config.py"
    before = config.read_bytes()
    result = rig(applied, "runs", "--timeline", "--format", "svg", "rig_config.py")
    assert result.returncode == 1, result
    assert result.error_lines == [result.stderr.strip()], result  # one line
    assert "rig_config.py already exists" in result.stderr and "--force" in result.stderr
    assert config.read_bytes() == before
    assert rig(applied, "plan").returncode == 0  # the project still loads


def test_timeline_svg_overwrites_an_existing_file_with_force(applied: Path) -> None:
    target = applied / "apply.svg"
    target.write_text("an older picture", encoding="utf-8")
    result = rig(applied, "runs", "--timeline", "--format", "svg", "apply.svg", "--force")
    assert result.returncode == 0, result
    assert target.read_text(encoding="utf-8").startswith("<?xml")
    assert [item.name for item in applied.iterdir() if item.name.startswith(".apply.svg")] == []  # no temporary left


def test_timeline_svg_to_dash_writes_the_picture_on_stdout(applied: Path) -> None:
    result = rig(applied, "runs", "--timeline", "--format", "svg", "-")
    assert result.returncode == 0, result
    assert result.stdout.startswith("<?xml") and result.stdout.rstrip().endswith("</svg>")
    assert not (applied / "-").exists()
    both = rig(applied, "--json", "runs", "--timeline", "--format", "svg", "-")
    assert both.returncode == 2, both
    assert both.stdout == ""
