"""rig op and rig rm: target forms, typed inputs from the input model, destructive guards, error paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import HOST_COMMAND_CONFIG, run_rig, write_project
from tests.cli.conftest import Rig


def test_workspace_operation_with_typed_flags(forked: Rig) -> None:
    result = forked("op", "dev", "test", "--bail", "--retries", "3", "--scope", "test:auth", "--json")
    assert result.returncode == 0, result
    assert result.json == {"workspace": "dev", "bail": True, "retries": 3, "scope": "test:auth"}


def test_defaults_come_from_the_model(forked: Rig) -> None:
    result = forked("op", "dev/test", "--json")
    assert result.json == {"workspace": "dev", "bail": False, "retries": 0, "scope": "test:all"}


def test_equals_form_and_negated_boolean(forked: Rig) -> None:
    result = forked("run", "dev2", "test", "--retries=5", "--no-bail", "--json")
    assert result.returncode == 0, result
    assert result.json["retries"] == 5 and result.json["bail"] is False
    assert result.json["workspace"] == "dev2"


def test_validation_error_is_one_line(forked: Rig) -> None:
    result = forked("op", "dev", "test", "--scope", "unit")
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()[-1:]
    assert line.startswith("error: Invalid input for operation test: scope:")
    assert "scope must start with test:" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retries", "many"], "error: --retries expects a whole number"),
        (["--bogus"], "error: Unknown option --bogus for operation test"),
        (["--retries"], "error: --retries requires a value"),
        (["--bail=maybe"], "error: --bail expects true or false"),
        (["stray"], "error: Unexpected positional argument stray for operation test"),
    ],
)
def test_bad_flags_are_usage_errors(forked: Rig, args: list[str], message: str) -> None:
    result = forked("op", "dev", "test", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == message + "\n"


def test_positional_and_choice_inputs(forked: Rig) -> None:
    result = forked("op", "dev", "greet", "bob", "--tone", "dry")
    assert result.returncode == 0, result
    assert result.stdout == "hello bob (dry) from dev\n"
    bad = forked("op", "dev", "greet", "bob", "--tone", "loud")
    assert bad.returncode == 2
    assert bad.stderr == "error: --tone must be one of: warm, dry (got 'loud')\n"


def test_missing_required_input_without_a_terminal(forked: Rig) -> None:
    result = forked("op", "dev", "greet")
    assert result.returncode == 2
    assert result.stderr == "error: Operation greet requires who\n"


def test_workspace_ref_input_takes_a_workspace_name(forked: Rig) -> None:
    result = forked("op", "dev", "pair", "--other", "dev2", "--json")
    assert result.returncode == 0, result
    assert result.json == {"pair": ["dev", "dev2"]}
    unknown = forked("op", "dev", "pair", "--other", "ghost")
    assert unknown.returncode == 1
    assert "ghost" in unknown.stderr


def test_operation_returning_nothing_prints_null(forked: Rig) -> None:
    result = forked("op", "dev", "noop", "--json")
    assert result.returncode == 0, result
    assert result.stdout == "null\n"
    human = forked("op", "dev", "noop")
    assert human.stdout == ""


def test_workflow_level_operation(forked: Rig) -> None:
    result = forked("op", "status", "--json")
    assert result.returncode == 0, result
    assert result.json == {"ctx": {"base": 1, "tools": ["git"]}}


def test_operation_help_lists_inputs(forked: Rig) -> None:
    result = forked("op", "dev", "test", "--help")
    assert result.returncode == 0, result
    assert "Usage: rig op dev test [OPTIONS]" in result.stdout
    for text in ("--bail / --no-bail", "--retries", "--scope", "which tests to run"):
        assert text in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["op", "ghost"],
            1,
            'error: No workspace or operation named "ghost" (workspaces: dev, dev2; operations: status)',
        ),
        (
            ["op", "dev", "ghost"],
            1,
            'error: Workflow dev has no workspace operation "ghost" (available: test, greet, pair, noop, remove)',
        ),
        (["op", "ghost/test"], 1, 'error: Unknown workspace "ghost"'),
        (["op", "dev"], 2, "error: rig op dev needs an operation (available: test, greet, pair, noop, remove)"),
    ],
)
def test_unknown_targets(forked: Rig, args: list[str], code: int, message: str) -> None:
    result = forked(*args)
    assert result.returncode == code, result
    assert result.stdout == ""
    assert result.stderr == message + "\n"


def test_name_that_is_workspace_and_operation_asks_for_slash_form(rig: Rig) -> None:
    assert rig("fork", "status").returncode == 0
    result = rig("op", "status")
    assert result.returncode == 2
    assert result.stderr == (
        'error: "status" is both a workspace and a workflow operation; '
        'run a workspace operation as "rig op status/OPERATION"\n'
    )
    assert rig("op", "status/noop", "--json").stdout == "null\n"


def test_rm_requires_yes_without_a_terminal(forked: Rig) -> None:
    result = forked("rm", "dev")
    assert result.returncode == 1
    assert result.stderr == "error: rm requires --yes when not running in an interactive terminal\n"
    everything = forked("rm", "--all")
    assert everything.returncode == 1
    assert everything.stderr == "error: rm --all requires --yes when not running in an interactive terminal\n"
    assert len(forked("ls", "--json").json["workflows"][0]["workspaces"]) == 2


def test_rm_usage_errors(forked: Rig) -> None:
    both = forked("rm", "dev", "--all")
    assert both.returncode == 2
    assert both.stderr == "error: rm accepts either a workspace name or --all, not both\n"
    neither = forked("rm")
    assert neither.returncode == 2
    assert neither.stderr == "error: rm needs a workspace name or --all when not running in an interactive terminal\n"


def test_rm_one_runs_the_remove_hook(forked: Rig) -> None:
    result = forked("rm", "dev", "--yes", "--json")
    assert result.returncode == 0, result
    assert result.json["name"] == "dev"
    assert [item["name"] for item in forked("ls", "--json").json["workflows"][0]["workspaces"]] == ["dev2"]
    human = forked("rm", "dev2", "-y")
    assert human.returncode == 0
    assert "removing dev2" in human.stderr  # the hook's print, as task output on stderr


def test_rm_all(forked: Rig) -> None:
    result = forked("rm", "--all", "--yes", "--json")
    assert result.returncode == 0, result
    assert sorted(item["name"] for item in result.json["removed"]) == ["dev", "dev2"]
    empty = forked("rm", "--all", "--yes", "--json")
    assert empty.json == {"removed": []}


def test_rm_unknown_workspace(forked: Rig) -> None:
    result = forked("rm", "ghost", "--yes")
    assert result.returncode == 1
    assert result.stderr == 'error: Unknown workspace "ghost"\n'


def test_remove_operation_needs_yes(forked: Rig) -> None:
    result = forked("op", "dev", "remove")
    assert result.returncode == 1
    assert result.stderr == "error: op dev remove requires --yes when not running in an interactive terminal\n"
    removed = forked("op", "dev", "remove", "--yes", "--json")
    assert removed.returncode == 0, removed
    assert removed.json["name"] == "dev"


def test_workspace_in_several_workflows_needs_workflow(tmp_path: Path) -> None:
    config = """
    from rigcli import sequence

    def create(workflow, workspace):
        return {"in": workflow.name}

    def where(workspace, workflow):
        return workflow.name

    def build(name):
        return (sequence(name).task("t", lambda step: None).workspace(create=create)
                .workspace_operation("where", run=where))

    workflows = [build("smoke"), build("api")]
    """
    project = write_project(tmp_path / "p", config)
    for workflow in ("smoke", "api"):
        assert run_rig("fork", "shared", "--workflow", workflow, cwd=project).returncode == 0
    result = run_rig("op", "shared", "where", "--json", cwd=project)
    assert result.returncode == 2
    assert result.stderr == 'error: Workspace "shared" exists in multiple workflows: api, smoke. Pass --workflow.\n'
    chosen = run_rig("op", "shared", "where", "--workflow", "smoke", "--json", cwd=project)
    assert chosen.returncode == 0, chosen
    assert chosen.json == "smoke"


def test_host_commands_from_tasks_need_a_terminal_or_trust(tmp_path: Path) -> None:
    project = write_project(tmp_path / "host", HOST_COMMAND_CONFIG)
    refused = run_rig("apply", cwd=project)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "error: Host command requires confirmation in an interactive terminal (or RIG_TRUST_HOST_COMMANDS=1): "
        "sh -c 'echo set-up-on-host' at rig_config.py:9 in setup (the rest: rig logs setup)"
    )
    trusted = run_rig("apply", "--json", cwd=project, env={"RIG_TRUST_HOST_COMMANDS": "1"})
    assert trusted.returncode == 0, trusted
    assert trusted.json["context"] == {"exit_code": 0}  # stdout holds only the result...
    hello = run_rig("op", "hello", "--json", cwd=project, env={"RIG_TRUST_HOST_COMMANDS": "1"})
    assert hello.json == {"exit_code": 0}
    assert "ran-on-host" in hello.stderr  # ...and the command's own output goes to stderr


def test_operations_run_host_commands_only_in_a_terminal(tmp_path: Path) -> None:
    project = write_project(tmp_path / "host", HOST_COMMAND_CONFIG)
    result = run_rig("op", "hello", cwd=project, env={"RIG_TRUST_HOST_COMMANDS": "0"})
    assert result.returncode == 1
    assert "needs an interactive terminal" in result.stderr
