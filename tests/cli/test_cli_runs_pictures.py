"""rig runs --timeline and --stats through the installed rig: overlap, critical path, SVG, statistics."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pexpect
import pytest

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, write_project

# Two 1 s branches side by side with a 2 s chain: the chain decides when the apply ends.
PARALLEL_CONFIG = """
import time

from rigcli import sequence


def quick(step):
    return None


def one_second(step):
    time.sleep(1)


workflows = (
    sequence("web")
    .task("setup", quick)
    .parallel(
        a=sequence("a").task("one", one_second),
        b=sequence("b").task("two", one_second),
        long=sequence("long").task("first", one_second).task("second", one_second),
    )
    .task("join", quick)
)
"""
PATHS = ["setup", "a.one", "b.two", "long.first", "long.second", "join"]

# ``fixed`` stays cached while ``changing`` is edited between applies (its marker).
STATS_CONFIG = """
import time

from rigcli import sequence


def fixed(step):
    return None


def changing(step):
    time.sleep(0.2)
    return {"ctx": {"marker": "MARKER"}}


workflows = sequence("stats").task("fixed", fixed).task("changing", changing)
"""

SVG = "{http://www.w3.org/2000/svg}"


def rig(project: Path, *args: str) -> Result:
    return run_rig(*args, cwd=project, env={"NO_COLOR": "1"}, subprocess=True)


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parallel project after one apply (module-wide: it takes two seconds)."""
    project = write_project(tmp_path_factory.mktemp("timeline") / "web", PARALLEL_CONFIG)
    result = rig(project, "apply")
    assert result.returncode == 0, result
    return project


def test_timeline_json_overlaps_the_parallel_branches_and_marks_the_longer_chain(applied: Path) -> None:
    result = rig(applied, "--json", "runs", "--timeline")
    assert result.returncode == 0, result
    drawn = result.json
    nodes = {node["path"]: node for node in drawn["nodes"]}
    assert list(nodes) == PATHS
    one, two = nodes["a.one"], nodes["b.two"]
    assert one["start"] < two["end"] and two["start"] < one["end"]  # side by side
    assert one["end"] - one["start"] >= 1.0 and two["end"] - two["start"] >= 1.0
    assert drawn["critical_path"] == ["setup", "long.first", "long.second", "join"]
    assert drawn["total_seconds"] >= 2.0 and drawn["total_seconds"] == nodes["join"]["end"]
    assert nodes["setup"]["start"] == 0.0
    assert all(node["status"] == "succeeded" for node in nodes.values())
    # RUN accepts the short id rig shows, and the full one.
    assert rig(applied, "--json", "runs", "--timeline", drawn["run_id"][:8]).json == drawn
    assert rig(applied, "--json", "runs", "--timeline", drawn["run_id"]).json == drawn


def test_timeline_off_a_terminal_is_a_plain_table_naming_the_critical_path_and_slowest(applied: Path) -> None:
    result = rig(applied, "runs", "--timeline")
    assert result.returncode == 0, result
    assert "\x1b[" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("web  apply ") and "ran 6, cached 0" in lines[0]
    assert lines[1].split() == ["#", "node", "status", "start", "end", "duration", "critical"]
    rows = {line.split()[1]: line.split() for line in lines[3:9]}
    assert list(rows) == PATHS
    assert rows["long.second"][-1] == "*" and rows["a.one"][-1].endswith("s")  # no mark: ends in its duration
    assert "critical path: setup -> long.first -> long.second -> join" in lines
    slowest = next(line for line in lines if line.startswith("slowest: "))
    named = [entry.split()[0] for entry in slowest.removeprefix("slowest: ").split(", ")]
    assert len(named) == 5  # the slowest five: the four 1 s tasks first
    assert set(named[:4]) == {"a.one", "b.two", "long.first", "long.second"}


def test_timeline_on_a_100_column_terminal_draws_bars_that_fit(applied: Path) -> None:
    child = pexpect.spawn(
        RIG,
        ["runs", "--timeline"],
        cwd=str(applied),
        env=env_with_rig({"TERM": "xterm-256color", "NO_COLOR": "", "COLUMNS": "100", "LINES": "40"}),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = str(child.before)
    assert "\x1b[" in screen
    lines = re.sub(r"\x1b\[[0-9;]*m", "", screen).replace("\r\n", "\n").splitlines()
    assert all(len(line) <= 100 for line in lines), lines
    bars = {line[2:].split(" ", 1)[0]: line for line in lines if line[2:].split(" ", 1)[0] in PATHS}
    assert set(bars) == set(PATHS)
    assert bars["long.second"].startswith("◆ ") and bars["a.one"].startswith("  ")

    def span(line: str) -> tuple[int, int]:
        cells = [index for index, char in enumerate(line) if char in "█▏▎▍▌▋▊▉"]
        return cells[0], cells[-1]

    one, two, second = span(bars["a.one"]), span(bars["b.two"]), span(bars["long.second"])
    assert one[0] <= two[1] and two[0] <= one[1]  # the branches overlap on the screen
    assert second[0] >= one[1] - 1  # the chain's second task starts where the branches end
    assert any(line.startswith("critical path") and "long.second" in line for line in lines)


def test_timeline_on_a_terminal_with_no_color_is_the_plain_table(applied: Path) -> None:
    child = pexpect.spawn(
        RIG,
        ["runs", "--timeline"],
        cwd=str(applied),
        env=env_with_rig({"TERM": "xterm-256color", "NO_COLOR": "1"}),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = str(child.before)
    assert "\x1b[" not in screen and "█" not in screen
    assert "critical path: setup -> long.first -> long.second -> join" in screen.replace("\r\n", "\n").splitlines()


def test_timeline_svg_is_well_formed_with_one_bar_per_task(applied: Path, tmp_path: Path) -> None:
    target = tmp_path / "apply.svg"
    result = rig(applied, "runs", "--timeline", "--format", "svg", str(target))
    assert result.returncode == 0, result
    assert str(target) in result.stdout + result.stderr
    root = ET.parse(target).getroot()
    assert root.tag == f"{SVG}svg"
    bars = [rect for rect in root.iter(f"{SVG}rect") if "bar" in rect.get("class", "").split()]
    assert [rect.get("data-path") for rect in bars] == PATHS
    assert len({rect.get("id") for rect in bars}) == len(PATHS)
    critical = [rect.get("data-path") for rect in bars if "critical" in rect.get("class", "").split()]
    assert critical == ["setup", "long.first", "long.second", "join"]
    x = {rect.get("data-path"): float(rect.get("x", "0")) for rect in bars}
    width = {rect.get("data-path"): float(rect.get("width", "0")) for rect in bars}
    assert x["a.one"] < x["b.two"] + width["b.two"] and x["b.two"] < x["a.one"] + width["a.one"]
    assert x["long.second"] >= x["long.first"] + width["long.first"] - 1


def test_timeline_of_an_unknown_run_or_before_any_apply_is_not_found(applied: Path, tmp_path: Path) -> None:
    unknown = rig(applied, "runs", "--timeline", "deadbeef")
    assert unknown.returncode != 0 and "deadbeef" in unknown.stderr
    fresh = write_project(tmp_path / "fresh", PARALLEL_CONFIG)
    none = rig(fresh, "runs", "--timeline")
    assert none.returncode != 0 and "rig apply" in none.stderr


def test_timeline_and_stats_usage_errors(applied: Path) -> None:
    both = rig(applied, "runs", "--timeline", "--stats")
    assert both.returncode == 2 and "--timeline or --stats" in both.stderr
    svg_without_timeline = rig(applied, "runs", "--format", "svg", "x.svg")
    assert svg_without_timeline.returncode == 2 and "--timeline" in svg_without_timeline.stderr
    png = rig(applied, "runs", "--timeline", "--format", "png", "x.png")
    assert png.returncode == 2 and "svg" in png.stderr
    assert not (applied / "x.svg").exists() and not (applied / "x.png").exists()


def test_stats_after_three_applies(tmp_path: Path) -> None:
    project = write_project(tmp_path / "stats", STATS_CONFIG)
    for marker in ("one", "two", "three"):  # each apply: ``changing`` edited, ``fixed`` not
        (project / "rig_config.py").write_text(STATS_CONFIG.replace("MARKER", marker), encoding="utf-8")
        result = rig(project, "apply")
        assert result.returncode == 0, result
    result = rig(project, "--json", "runs", "--stats")
    assert result.returncode == 0, result
    tasks = {task["path"]: task for task in result.json["tasks"]}
    assert list(tasks) == ["fixed", "changing"]
    assert tasks["fixed"]["runs"] == 3 and tasks["fixed"]["cache_hit_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert tasks["fixed"]["median_seconds"] is not None  # its one run, the first apply's
    changing = tasks["changing"]
    assert changing["runs"] == 3 and changing["cache_hit_rate"] == 0.0
    assert 0.2 <= changing["median_seconds"] <= changing["p95_seconds"]
    # --last N looks at the newest N applies only.
    last_two = {task["path"]: task for task in rig(project, "--json", "runs", "--stats", "--last", "2").json["tasks"]}
    assert last_two["fixed"]["runs"] == 2 and last_two["fixed"]["cache_hit_rate"] == 1.0
    assert last_two["fixed"]["median_seconds"] is None  # cached runs have no duration
    # The last apply's timeline: ``fixed`` a zero-width mark at the start, ``changing`` the whole path.
    last = rig(project, "--json", "runs", "--timeline").json
    assert [(node["path"], node["status"], node["cached"]) for node in last["nodes"]] == [
        ("fixed", "cached", True),
        ("changing", "succeeded", False),
    ]
    assert last["nodes"][0]["start"] == last["nodes"][0]["end"] == 0.0
    assert last["critical_path"] == ["changing"]
    table = rig(project, "runs", "--stats")
    assert table.returncode == 0, table
    lines = table.stdout.splitlines()
    assert lines[0] == "stats  the last 3 applies"
    assert lines[1].split() == ["node", "runs", "cache", "hits", "median", "p95"]
    assert lines[3].split()[:3] == ["fixed", "3", "67%"] and lines[4].split()[:3] == ["changing", "3", "0%"]


def test_stats_count_an_apply_that_found_everything_cached(tmp_path: Path) -> None:
    """The third apply runs nothing: both tasks are cache hits of it, read from the recorded applies."""
    project = write_project(tmp_path / "stats", STATS_CONFIG)
    for marker in ("one", "two", "two"):
        (project / "rig_config.py").write_text(STATS_CONFIG.replace("MARKER", marker), encoding="utf-8")
        result = rig(project, "apply")
        assert result.returncode == 0, result
    applies = rig(project, "--json", "runs").json["runs"]
    assert [apply["ran"] for apply in applies] == [0, 1, 2]
    result = rig(project, "--json", "runs", "--stats")
    assert result.returncode == 0, result
    assert result.json["applies"] == 3
    tasks = {task["path"]: task for task in result.json["tasks"]}
    assert tasks["fixed"]["runs"] == 3 and tasks["fixed"]["cache_hit_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert tasks["changing"]["runs"] == 3 and tasks["changing"]["cache_hit_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert tasks["changing"]["median_seconds"] >= 0.2  # its two runs; the hit adds no zero
    only_last = {task["path"]: task for task in rig(project, "--json", "runs", "--stats", "--last", "1").json["tasks"]}
    assert {path: (task["runs"], task["cache_hit_rate"]) for path, task in only_last.items()} == {
        "fixed": (1, 1.0),
        "changing": (1, 1.0),
    }
    # The timeline shows the last apply that ran a task; the all-cached one by its id is two marks.
    last_ran = rig(project, "--json", "runs", "--timeline").json
    assert last_ran["run_id"] == applies[1]["id"]
    all_cached = rig(project, "--json", "runs", "--timeline", applies[0]["short_id"]).json
    assert [(node["path"], node["cached"], node["start"], node["end"]) for node in all_cached["nodes"]] == [
        ("fixed", True, 0.0, 0.0),
        ("changing", True, 0.0, 0.0),
    ]
