"""A run left ``running`` by a rig that was killed is in doubt, the same in plan, explain, cache ls and JSON."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import SLOW_CONFIG, kill_apply_after, run_rig, write_project


def test_a_killed_apply_leaves_a_run_in_doubt_everywhere(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", SLOW_CONFIG.format(seconds=60))
    kill_apply_after(project, "waiting")  # the handler prints it once its run is journaled

    plan = run_rig("--json", "plan", cwd=project)
    assert plan.returncode == 0, plan
    [node] = plan.json["nodes"]
    assert (node["status"], node["reason"]["code"], node["reason"]["message"]) == (
        "pending",
        "in-doubt",
        "left running by a rig process that is gone",
    )

    explain = run_rig("--json", "cache", "explain", cwd=project)
    [item] = explain.json["explanations"]
    assert (item["status"], item["reason"]["code"]) == ("pending", "in-doubt")

    [entry] = run_rig("--json", "cache", "ls", cwd=project).json["entries"]
    assert entry["status"] == "in-doubt"

    human = run_rig("plan", cwd=project)
    assert "left running by a rig process that is gone" in human.stdout
    assert "no previous run" not in human.stdout


def test_an_in_doubt_task_runs_again_on_apply(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", SLOW_CONFIG.format(seconds=60))
    kill_apply_after(project, "waiting")  # the handler prints it once its run is journaled
    (project / "rig_config.py").write_text(SLOW_CONFIG.format(seconds=0))

    assert run_rig("apply", cwd=project).returncode == 0
    [node] = run_rig("--json", "plan", cwd=project).json["nodes"]
    assert (node["status"], node["reason"]["code"]) == ("pending", "expired")  # cache_ttl=0: every apply
