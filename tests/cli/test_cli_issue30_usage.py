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


# -- 4: an absurd --ttl / workspace(ttl=..., idle_stop=...) is refused before anything runs ----------------
def _nothing_ran(project: Path) -> None:
    runs = rig(project, "--json", "runs")
    assert runs.returncode == 0, runs
    assert runs.json["runs"] == []
    listed = rig(project, "--json", "ls", "--no-probe")
    assert [ws for item in listed.json["workflows"] for ws in item["workspaces"]] == []


@pytest.mark.parametrize("ttl", ["99999999999d", "99999999999999999999s", "40000d"])
def test_fork_ttl_too_long_is_a_usage_error_before_the_apply(project: Path, ttl: str) -> None:
    result = rig(project, "fork", "box", "--ttl", ttl)
    assert result.returncode == 2, result
    assert result.error_lines == [result.stderr.strip()], result
    assert "--ttl" in result.stderr and "at most" in result.stderr and "OverflowError" not in result.stderr
    _nothing_ran(project)


@pytest.mark.parametrize("setting", ['ttl="99999999999d"', 'idle_stop="99999999999d"', "idle_stop=10**30"])
def test_workspace_lifetime_too_long_in_the_config_is_a_config_error_naming_the_line(
    tmp_path: Path, setting: str
) -> None:
    config = DEV_CONFIG.replace(".workspace(create=create, remove=remove)", f".workspace(create=create, {setting})")
    assert config != DEV_CONFIG
    project = write_project(tmp_path / "dev", config)
    line = next(
        number
        for number, text in enumerate((project / "rig_config.py").read_text().splitlines(), 1)
        if "workspace(create" in text
    )
    result = rig(project, "fork", "box")
    assert result.returncode == 1, result
    assert result.error_lines == [result.stderr.strip()], result
    assert f"rig_config.py:{line}:" in result.stderr and "at most" in result.stderr
    assert not (project / ".rig" / "state.sqlite").exists()  # refused at load: no apply, no record


# -- 5, 6, 7: whole-number options out of their range are usage errors naming the range -------------------
HUGE = "99999999999999999999"


def _usage_error(result: Result, *said: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == "", result
    assert result.error_lines == [result.stderr.strip()], result  # one line, no traceback
    for text in said:
        assert text in result.stderr, result


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "--limit", HUGE),
        ("runs", "-n", HUGE),
        ("runs", f"--limit={HUGE}"),
        ("--json", "runs", "--limit", HUGE),
        ("runs", "--stats", "--last", HUGE),
        ("--json", "runs", "--stats", "--last", HUGE),
    ],
)
def test_runs_limit_and_last_beyond_their_range_are_usage_errors(applied: Path, args: tuple[str, ...]) -> None:
    option = "--last" if "--last" in args else "--limit"
    _usage_error(rig(applied, *args), f"{option} must be between 1 and 1000000, not {HUGE}")


@pytest.mark.parametrize("count", ["101", "0", "-1", HUGE])
def test_fork_count_out_of_range_is_a_usage_error_naming_the_range(project: Path, count: str) -> None:
    _usage_error(rig(project, "fork", "box", "--count", count), f"--count must be between 1 and 100, not {count}")
    _nothing_ran(project)


def test_fork_count_that_is_no_number_says_so(project: Path) -> None:
    _usage_error(rig(project, "fork", "box", "--count", "abc"), "--count must be a whole number, not 'abc'")
    _nothing_ran(project)


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_runs_limit_zero_or_negative_is_a_usage_error_in_a_project_with_applies(applied: Path, limit: str) -> None:
    _usage_error(rig(applied, "runs", "--limit", limit), f"--limit must be between 1 and 1000000, not {limit}")
    _usage_error(rig(applied, "runs", "--stats", "--last", limit), "--last must be between 1 and 1000000")


def test_the_table_bounds_fork_count_as_the_engine_does() -> None:
    from rigcli.cli.table.workflow import MAX_FORKS
    from rigcli.engine.forks import MAX_COUNT

    assert MAX_FORKS == MAX_COUNT


# -- 13: with --detailed-exitcode every error exits 1, so that 2 always means "pending" ----------------------
@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--detailed-exitcode", "--bogus"),
        ("plan", "--bogus", "--detailed-exitcode"),
        ("plan", "--detailed-exitcode", "extra"),
        ("--progress", "sideways", "plan", "--detailed-exitcode"),
        ("plan", "--detailed-exitcode", "--json", "--workflow"),
    ],
)
def test_detailed_exitcode_turns_a_usage_error_into_1(project: Path, args: tuple[str, ...]) -> None:
    result = rig(project, *args)
    assert result.returncode == 1, result
    assert result.error_lines == [result.stderr.strip()], result
    without = rig(project, *(word for word in args if word != "--detailed-exitcode"))
    assert without.returncode == 2, without  # the same mistake without the flag: the usual usage error


def test_detailed_exitcode_turns_an_error_of_the_body_into_1(tmp_path: Path) -> None:
    from tests.cli.cli_support import MULTI_CONFIG

    project = write_project(tmp_path / "multi", MULTI_CONFIG)
    ambiguous = rig(project, "plan", "--detailed-exitcode")  # several workflows, none named: a usage error
    assert ambiguous.returncode == 1, ambiguous
    assert "--workflow" in ambiguous.stderr
    broken = write_project(tmp_path / "broken", "workflows = 1/0\n")
    assert rig(broken, "plan", "--detailed-exitcode").returncode == 1


def test_detailed_exitcode_stream_summary_says_1(project: Path) -> None:
    import json

    result = rig(project, "--json-stream", "plan", "--detailed-exitcode", "--bogus")
    assert result.returncode == 1, result
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["type"] == "summary" and summary["error"]["exit_code"] == 1


def test_detailed_exitcode_still_says_2_for_pending_and_0_for_nothing(project: Path) -> None:
    assert rig(project, "plan", "--detailed-exitcode").returncode == 2
    assert rig(project, "apply").returncode == 0
    assert rig(project, "plan", "--detailed-exitcode").returncode == 0
