"""What a terminal user is asked: the workflow picker, confirmations, missing inputs and names."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.cli.cli_support import HOST_COMMAND_CONFIG, RIG, env_with_rig, run_rig, write_project
from tests.cli.conftest import Rig


def spawn(project: Path, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        RIG,
        list(args),
        cwd=str(project),
        env=env_with_rig({"TERM": "xterm"}),
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=60,
    )


def ended(child: pexpect.spawn) -> tuple[int, str]:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1), str(child.before)


def test_workflow_picker(multi_project: Path) -> None:
    child = spawn(multi_project, "plan")
    child.expect("Select workflow")
    child.expect("Choose")
    child.sendline("2")
    code, output = ended(child)
    assert code == 0, output
    assert "web  0/1 cached" in output


TWO_WITH_WORKSPACES = """
from rigcli import sequence

api = sequence("api").task("a", lambda step: {"ctx": {"a": 1}})
web = sequence("web").task("w", lambda step: {"ctx": {"w": 1}})
web = web.workspace(create=lambda workflow: {"from": workflow.name})
workflows = [api, web]
"""


def test_apply_and_fork_ask_which_workflow_and_do_it_once_on_the_pick(tmp_path: Path) -> None:
    project = write_project(tmp_path / "two", TWO_WITH_WORKSPACES)
    child = spawn(project, "apply")
    child.expect("Select workflow")
    child.expect("Choose")
    child.sendline("2")
    code, output = ended(child)
    assert code == 0, output
    assert "Select workflow" not in output and "apply web" in output  # asked once, then applied the pick
    cached = {name: run_rig("--json", "plan", "--workflow", name, cwd=project).json for name in ("api", "web")}
    assert {name: plan["cached_node_count"] for name, plan in cached.items()} == {"api": 0, "web": 1}

    child = spawn(project, "fork", "dev")
    child.expect("Select workflow")
    child.expect("Choose")
    child.sendline("web")
    code, output = ended(child)
    assert code == 0, output
    [api, web] = run_rig("--json", "ls", cwd=project).json["workflows"]
    assert api["workspaces"] == []
    assert [(item["name"], item["ctx"]) for item in web["workspaces"]] == [("dev", {"from": "web"})]

    # Not in a terminal: the engine's usage error, and nothing was applied or made.
    refused = run_rig("apply", cwd=project)
    assert (refused.returncode, refused.stderr) == (
        2,
        "error: Multiple workflows are defined; pass --workflow (available: api, web)\n",
    )


def test_rm_asks_and_respects_no(forked: Rig, dev_project: Path) -> None:
    child = spawn(dev_project, "rm", "dev")
    child.expect(r"Remove workspace dev\?")
    child.sendline("n")
    code, output = ended(child)
    assert code == 1
    assert "Kept workspace dev" in output
    assert "error" not in output and "Cancelled" not in output
    assert len(run_rig("ls", "--json", cwd=dev_project).json["workflows"][0]["workspaces"]) == 2


def test_cache_clear_asks_like_invalidate_all_and_says_what_it_kept(forked: Rig, dev_project: Path) -> None:
    child = spawn(dev_project, "cache", "clear")
    child.expect(r"Delete every cached run of workflow dev\?")
    child.sendline("n")
    code, output = ended(child)
    assert code == 1
    assert "Kept the cache of workflow dev" in output and "error" not in output
    assert run_rig("plan", "--json", cwd=dev_project).json["cached_node_count"] == 2
    child = spawn(dev_project, "cache", "clear")
    child.expect(r"Delete every cached run of workflow dev\?")
    child.sendline("y")
    code, output = ended(child)
    assert code == 0, output
    assert "Cleared 2 cache entries." in output


def test_rm_asks_and_removes_on_yes(forked: Rig, dev_project: Path) -> None:
    child = spawn(dev_project, "rm", "dev")
    child.expect(r"Remove workspace dev\?")
    child.sendline("y")
    code, output = ended(child)
    assert code == 0, output
    assert "removed dev" in output


def test_missing_required_input_is_prompted(forked: Rig, dev_project: Path) -> None:
    child = spawn(dev_project, "op", "dev", "greet")
    child.expect("who to greet")
    child.sendline("Zed")
    code, output = ended(child)
    assert code == 0, output
    assert "hello Zed (warm) from dev" in output


def test_fork_without_a_name_asks_for_one(dev_project: Path) -> None:
    child = spawn(dev_project, "fork")
    child.expect("Workspace name")
    child.sendline("picked")
    code, output = ended(child)
    assert code == 0, output
    assert "picked ready" in output
    assert run_rig("ls", "--json", cwd=dev_project).json["workflows"][0]["workspaces"][0]["name"] == "picked"


def test_json_mode_never_prompts(forked: Rig, dev_project: Path) -> None:
    child = spawn(dev_project, "--json", "rm", "dev")
    code, output = ended(child)
    assert code == 1
    assert "requires --yes" in output


def test_host_command_from_a_task_asks_first(tmp_path: Path) -> None:
    project = write_project(tmp_path / "host", HOST_COMMAND_CONFIG)
    denied = spawn(project, "apply")
    denied.expect("Run on this host: sh -c 'echo set-up-on-host'")
    denied.sendline("n")
    code, output = ended(denied)
    assert code == 1 and "Host command denied" in output
    child = spawn(project, "apply")
    child.expect("Run on this host")
    child.sendline("y")
    code, output = ended(child)
    assert code == 0, output
    assert "set-up-on-host" in output


def test_an_operation_the_user_named_runs_its_host_command_without_asking(tmp_path: Path) -> None:
    project = write_project(tmp_path / "host", HOST_COMMAND_CONFIG)
    code, output = ended(spawn(project, "op", "hello"))
    assert code == 0, output
    assert "ran-on-host" in output and "Run on this host" not in output
