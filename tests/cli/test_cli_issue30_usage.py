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


# -- 18: run ids are shown and typed by their beginning ----------------------------------------------------
def _shortest_unique_prefix(target: str, others: list[str], at_least: int = 4) -> str:
    length = at_least
    while any(other != target and other.startswith(target[:length]) for other in others):
        length += 1
    return target[:length]


def _all_ids(project: Path) -> tuple[dict, list[str]]:
    applied = rig(project, "--json", "runs").json["runs"]
    ids = [item["id"] for item in applied] + [node["run_id"] for item in applied for node in item["nodes"]]
    return applied[0], ids


def test_shown_run_ids_are_the_first_eight_characters_of_the_id(applied: Path) -> None:
    last, _ = _all_ids(applied)
    assert last["short_id"] == last["id"][:8]
    table = rig(applied, "runs")
    assert table.returncode == 0, table
    assert last["id"][:8] in table.stdout and last["id"][-8:] not in table.stdout
    run_id = last["nodes"][0]["run_id"]
    plan = rig(applied, "plan")
    assert f"run {run_id[:8]}" in plan.stdout, plan
    detail = rig(applied, "runs", last["id"][:8])
    assert run_id[:8] in detail.stdout and run_id[-8:] not in detail.stdout


def test_any_unique_prefix_of_four_or_more_names_a_run_or_apply_everywhere(applied: Path) -> None:
    assert rig(applied, "apply").returncode == 0  # a second apply: more ids to tell apart
    last, ids = _all_ids(applied)
    apply_id, run_id = last["id"], last["nodes"][0]["run_id"]
    first = rig(applied, "--json", "runs").json["runs"][-1]
    ran = first["nodes"][0]["run_id"]  # a run that ran (the last apply reused it)
    for ref in {_shortest_unique_prefix(apply_id, ids), apply_id[:8], apply_id, apply_id.upper()[:10]}:
        assert rig(applied, "--json", "runs", ref).json["id"] == apply_id, ref
        assert rig(applied, "--json", "logs", "--run", ref).json["apply_id"] == apply_id, ref
    first_ref = _shortest_unique_prefix(first["id"], ids)
    assert rig(applied, "--json", "runs", "--timeline", first_ref).json["run_id"] == first["id"]
    for ref in {_shortest_unique_prefix(ran, ids), ran[:8], ran}:
        assert rig(applied, "--json", "logs", "--run", ref).json["run_id"] == ran, ref
        assert rig(applied, "--json", "runs", "--timeline", ref).json["run_id"] == first["id"], ref
    assert run_id == ran
    too_short = rig(applied, "runs", apply_id[:3])
    assert too_short.returncode == 1 and "at least 4" in too_short.stderr, too_short


def _sql(project: Path, *statements: str) -> None:
    import sqlite3

    with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
        for statement in statements:
            db.execute(statement)


def test_an_ambiguous_prefix_lists_the_ids_it_could_mean_by_prefixes_that_tell_them_apart(applied: Path) -> None:
    assert rig(applied, "apply").returncode == 0
    # Two applies whose ids begin alike (as two in a few hundred thousand would by chance).
    _sql(applied, "UPDATE apply_runs SET id = 'abcd1234' || substr(id, 9)")
    listed = rig(applied, "--json", "runs").json["runs"]
    assert [item["id"][:8] for item in listed] == ["abcd1234", "abcd1234"]
    result = rig(applied, "runs", "abcd")
    assert result.returncode == 1, result
    assert result.error_lines == [result.stderr.strip()], result
    for item in listed:
        assert _shortest_unique_prefix(item["id"], [other["id"] for other in listed], 9) in result.stderr
    assert rig(applied, "--json", "runs", listed[0]["id"][:12]).json["id"] == listed[0]["id"]


def test_ids_an_older_rig_made_keep_the_short_id_it_showed(applied: Path) -> None:
    # An older rig's ids were 32 characters beginning with the time; it showed their last 8.
    legacy = "18ef11e3413868faa6d575f9fb6f13af"
    _sql(applied, f"UPDATE apply_runs SET id = '{legacy}'")
    [item] = rig(applied, "--json", "runs").json["runs"]
    assert item["id"] == legacy and item["short_id"] == "fb6f13af"
    assert "fb6f13af" in rig(applied, "runs").stdout
    assert rig(applied, "--json", "runs", "fb6f13af").json["id"] == legacy  # what it showed
    assert rig(applied, "--json", "runs", "18ef11e34138").json["id"] == legacy  # its beginning, like any id


# -- 19: rig rm takes several names, like stop and start ---------------------------------------------------
FAILING_REMOVE = DEV_CONFIG.replace(
    'print(f"removing {workspace.name}")',
    'if workspace.name == "bad":\n        raise RuntimeError("the bad one will not go")\n'
    '    print(f"removing {workspace.name}")',
)


def _forked(project: Path, *names: str) -> Path:
    for name in names:
        result = rig(project, "fork", name)
        assert result.returncode == 0, result
    return project


def _workspaces(project: Path) -> list[str]:
    [workflow] = rig(project, "--json", "ls", "--no-probe").json["workflows"]
    return sorted(item["name"] for item in workflow["workspaces"])


def test_rm_removes_every_workspace_it_is_given_and_json_reports_each(project: Path) -> None:
    _forked(project, "a", "b", "c", "d")
    result = rig(project, "--json", "rm", "a", "b", "c", "--yes")
    assert result.returncode == 0, result
    report = result.json
    assert [item["name"] for item in report["removed"]] == ["a", "b", "c"]
    assert (report["failed"], report["missing"]) == ([], [])
    assert _workspaces(project) == ["d"]
    human = rig(project, "rm", "d", "d", "--yes")  # a name given twice is removed once
    assert human.returncode == 0, human
    assert human.stderr.count("removed d") == 1
    assert _workspaces(project) == []


def test_rm_of_several_with_an_unknown_name_removes_none_unless_missing_ok(project: Path) -> None:
    _forked(project, "a", "b")
    refused = rig(project, "rm", "a", "nope", "b", "--yes")
    assert refused.returncode == 1, refused
    assert refused.error_lines == ['error: Unknown workspace "nope"'], refused
    assert _workspaces(project) == ["a", "b"]
    allowed = rig(project, "--json", "rm", "a", "nope", "b", "--yes", "--missing-ok")
    assert allowed.returncode == 0, allowed
    assert [item["name"] for item in allowed.json["removed"]] == ["a", "b"]
    assert allowed.json["missing"] == ["nope"]
    assert _workspaces(project) == []


def test_rm_of_several_goes_on_past_one_that_fails_and_exits_1(tmp_path: Path) -> None:
    project = _forked(write_project(tmp_path / "dev", FAILING_REMOVE), "a", "bad", "c")
    result = rig(project, "--json", "rm", "a", "bad", "c", "--yes")
    assert result.returncode == 1, result
    report = result.json
    assert [item["name"] for item in report["removed"]] == ["a", "c"]
    [failure] = report["failed"]
    assert failure["name"] == "bad" and "the bad one will not go" in failure["error"]
    assert _workspaces(project) == ["bad"]


def test_rm_of_several_asks_once_and_refuses_names_with_all(project: Path) -> None:
    _forked(project, "a", "b")
    unasked = rig(project, "rm", "a", "b")
    assert unasked.returncode == 1 and "--yes" in unasked.stderr, unasked
    both = rig(project, "rm", "a", "b", "--all", "--yes")
    assert both.returncode == 2, both
    assert _workspaces(project) == ["a", "b"]
