"""plan, apply, fork and ls through the installed entry point: exit codes, JSON shapes, stream discipline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.cli_support import env_with_rig, run_rig
from tests.cli.conftest import Rig

ESC = "\x1b"


def test_plan_json_shape(rig: Rig) -> None:
    result = rig("plan", "--json")
    assert result.returncode == 0, result
    plan = result.json
    assert set(plan) >= {"workflow", "cached_node_count", "node_count", "nodes", "final_context", "provider_checks"}
    assert (plan["workflow"], plan["cached_node_count"], plan["node_count"]) == ("dev", 0, 2)
    first = plan["nodes"][0]
    assert set(first) >= {"index", "path", "name", "status", "reason", "run_id", "upstream_run_ids"}
    assert [node["path"] for node in plan["nodes"]] == ["base", "tools"]
    assert [node["status"] for node in plan["nodes"]] == ["pending", "pending"]
    assert first["reason"]["code"] == "no-previous-run"
    assert result.stderr == ""


def test_plan_table_has_a_reason_for_every_pending_node(rig: Rig) -> None:
    result = rig("plan")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["dev", "0/2", "cached"]
    assert lines[1].split() == ["#", "status", "node", "reason"]
    rows = [line.rstrip().split(None, 3) for line in lines[3:5]]
    assert rows == [
        ["1", "pending", "base", "no previous run"],
        ["2", "pending", "tools", "upstream output is pending"],
    ]
    assert lines[-1] == "For cache details, run: rig cache explain"
    assert ESC not in result.stdout


def test_apply_runs_then_plan_is_cached(rig: Rig) -> None:
    result = rig("apply")
    assert result.returncode == 0, result
    assert result.stdout == ""
    assert "preparing base" in result.stderr  # task output goes to stderr
    assert "✓ base" in result.stderr and "✓ tools" in result.stderr
    assert "dev: ran 2, cached 0" in result.stderr
    assert ESC not in result.stderr
    plan = rig("plan", "--json").json
    assert (plan["cached_node_count"], plan["node_count"]) == (2, 2)
    assert plan["final_context"] == {"base": 1, "tools": ["git"]}
    again = rig("apply")
    assert again.stderr == "✓ dev: 2 cached\n"  # everything cached: one line, not a block per node


def test_apply_json_shape(rig: Rig) -> None:
    result = rig("--json", "apply")
    assert result.returncode == 0, result
    document = result.json
    assert set(document) >= {"workflow", "context", "plan"}
    assert document["context"] == {"base": 1, "tools": ["git"]}
    assert document["plan"]["node_count"] == 2
    assert "preparing base" not in result.stdout


def test_apply_dry_run_changes_nothing(rig: Rig) -> None:
    result = rig("apply", "--dry-run")
    assert result.returncode == 0, result
    assert "No changes applied." in result.stdout
    assert "0/2 cached" in result.stdout
    document = rig("apply", "--dry-run", "--json").json
    assert document["dry_run"] is True and document["plan"]["cached_node_count"] == 0
    assert rig("plan", "--json").json["cached_node_count"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "plan"],
        ["plan", "--json"],
        ["plan", "-C", "{dir}", "--json"],
        ["-C{dir}", "plan", "--json"],
        ["--chdir={dir}", "--json", "plan"],
        ["plan", "--json", "--chdir", "{dir}"],
    ],
)
def test_global_options_anywhere(dev_project: Path, tmp_path: Path, args: list[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = elsewhere if any("{dir}" in arg for arg in args) else dev_project
    result = run_rig(*[arg.replace("{dir}", str(dev_project)) for arg in args], cwd=cwd)
    assert result.returncode == 0, result
    assert result.json["workflow"] == "dev"


def test_state_option_puts_the_database_elsewhere(rig: Rig, dev_project: Path) -> None:
    result = rig("apply", "--state", "custom.sqlite")
    assert result.returncode == 0, result
    assert (dev_project / "custom.sqlite").is_file()
    assert rig("--state", "custom.sqlite", "plan", "--json").json["cached_node_count"] == 2
    assert rig("plan", "--json").json["cached_node_count"] == 0


def test_multiple_workflows_need_workflow(multi_project: Path) -> None:
    result = run_rig("plan", cwd=multi_project)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "error: Multiple workflows are defined; pass --workflow (available: api, web)\n"
    chosen = run_rig("plan", "--workflow", "web", "--json", cwd=multi_project)
    assert chosen.returncode == 0 and chosen.json["workflow"] == "web"
    before = run_rig("--workflow=api", "apply", "--json", cwd=multi_project)
    assert before.returncode == 0 and before.json["workflow"] == "api"


def test_unknown_workflow(multi_project: Path) -> None:
    result = run_rig("plan", "--workflow", "nope", "--json", cwd=multi_project)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == "error: Unknown workflow nope (available: api, web)\n"


def test_fork_json_record(rig: Rig) -> None:
    result = rig("fork", "dev", "--json")
    assert result.returncode == 0, result
    record = result.json
    assert set(record) >= {"name", "workflow", "ctx", "workflow_ctx", "created_at"}
    assert (record["name"], record["workflow"]) == ("dev", "dev")
    assert record["ctx"] == {"name": "dev", "base": 1}
    assert record["workflow_ctx"] == {"base": 1, "tools": ["git"]}


def test_fork_prints_only_the_name_on_a_pipe(rig: Rig) -> None:
    result = rig("fork", "feature-1")
    assert result.returncode == 0, result
    assert result.stdout == "feature-1\n"
    assert "feature-1 ready" in result.stderr
    alias = rig("create", "feature-2")
    assert alias.returncode == 0 and alias.stdout == "feature-2\n"


def test_fork_duplicate_fails(rig: Rig) -> None:
    assert rig("fork", "dev").returncode == 0
    result = rig("fork", "dev", "--json")
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.error_lines) == 1 and "dev" in result.stderr


@pytest.mark.parametrize("name", ["some workspace", "some/workspace", "-x", "a" * 64])
def test_fork_invalid_name(rig: Rig, name: str) -> None:
    result = rig("fork", "--", name) if name.startswith("-") else rig("fork", name)
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: Workspace name")
    assert rig("ls", "--json").json["workflows"][0]["workspaces"] == []


def test_fork_empty_and_missing_name(rig: Rig) -> None:
    empty = rig("fork", "")
    assert empty.returncode == 1
    assert empty.stderr == "error: create requires a workspace name\n"
    missing = rig("fork")
    assert missing.returncode == 2
    assert missing.stderr == "error: fork requires a workspace name: rig fork NAME\n"


def test_ls_json_and_human(forked: Rig) -> None:
    document = forked("ls", "--json").json
    [workflow] = document["workflows"]
    assert (workflow["name"], workflow["cached_node_count"], workflow["node_count"]) == ("dev", 2, 2)
    assert [item["name"] for item in workflow["workspaces"]] == ["dev", "dev2"]
    human = forked("ls")
    assert human.returncode == 0
    assert "2/2" in human.stdout and "dev2" in human.stdout


def test_ls_targets(forked: Rig) -> None:
    assert forked("ls", "snapshots", "--json").json == {"snapshots": []}
    config = forked("ls", "config", "--json").json
    assert set(config) >= {"project_dir", "config_path", "state_path", "workflows"}
    assert config["workflows"][0]["name"] == "dev"
    bad = forked("ls", "machines")
    assert bad.returncode == 2
    assert bad.stderr == "error: Unknown ls target machines. Expected workspaces, snapshots, or config.\n"


def test_errors_in_json_mode_keep_stdout_empty(rig: Rig) -> None:
    for args in (["--json", "rm", "nope", "--yes"], ["--json", "op", "nope"], ["--json", "cache", "explain", "zzz"]):
        result = rig(*args)
        assert result.returncode == 1, result
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: ")


_LIGHT_CONFIG = """
from rigcli import sequence


def noop(step):
    return None


workflows = sequence("light").task("a", noop).task("b", noop)
"""


def test_cached_plan_imports_no_heavy_modules(tmp_path: Path) -> None:
    # A cached plan's budget is a few tenths of a second; any one of these costs a large share of it.
    (tmp_path / "rig_config.py").write_text(_LIGHT_CONFIG, encoding="utf-8")
    env = {"RIG_HOME": str(tmp_path / "_home")}
    assert run_rig("apply", cwd=tmp_path, env=env, subprocess=True).returncode == 0
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", "plan"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env_with_rig(env),
    )
    assert completed.returncode == 0, completed.stderr
    assert "2/2 cached" in completed.stdout
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    for heavy in ("typer", "click", "rich", "pydantic", "asyncio", "sqlalchemy", "psycopg", "httpx", "hashlib"):
        assert heavy not in imported
    # nothing is due to expire: that is one indexed query, and the reaper is never imported
    assert "rigcli.engine.reaper" not in imported


# What the console script runs, less its own `import re`.
_ENTRY = "import sys; sys.argv[0] = 'rig'; from rigcli.__main__ import main; raise SystemExit(main())"


def test_cached_plan_leaves_what_it_never_uses_unimported(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(_LIGHT_CONFIG, encoding="utf-8")
    env = {"RIG_HOME": str(tmp_path / "_home")}
    assert run_rig("apply", cwd=tmp_path, env=env, subprocess=True).returncode == 0
    # -S: no site, so no editable install's import hook (it imports pathlib, urllib.parse with it);
    # rig's own directory on PYTHONPATH stands in for it.
    rig_root = str(Path(__file__).resolve().parents[2])
    completed = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", _ENTRY, "plan"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env_with_rig({**env, "PYTHONPATH": rig_root}),
    )
    assert completed.returncode == 0, completed.stderr
    assert "2/2 cached" in completed.stdout
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    assert "rigcli.engine.planner" in imported  # the full way planned it
    # dataclasses and pathlib import these for a rare branch; rig's modules, where a handler runs
    # (speed/imports.py). Each cost a cached plan of 200 tasks 2-17M instructions.
    for deferred in ("inspect", "copy", "urllib.parse", "ipaddress", "ntpath"):
        assert deferred not in imported, deferred
    # Signals are installed through _signal: signal's enums are built for a message only (speed/signals.py).
    assert "signal" not in imported
    assert "selectors" not in imported  # the output relay waits on its pipes with select.poll
    assert "sqlite3" not in imported and "_sqlite3" in imported  # the state through the extension module itself
    assert "datetime" not in imported  # no task has a cache TTL: the clock is read as text (records.utc_now)
    # The handler's source was parsed by the apply and is kept while the file is unchanged (speed/file_facts.py).
    for parsing in ("ast", "tokenize"):
        assert parsing not in imported, parsing


_GC_CONFIG = """
import gc
import weakref

from rigcli import sequence


class Node:
    pass


def probe(step):
    # Cyclic garbage a handler makes is collected: what loading made may be set aside, this is not.
    node = Node()
    node.self = node
    alive = weakref.ref(node)
    del node
    gc.collect()
    return {"ctx": {"collecting": gc.isenabled(), "cycle_freed": alive() is None}}


workflows = sequence("gc").task("probe", probe)
"""


def test_handlers_run_with_garbage_collection_on(tmp_path: Path) -> None:
    # The entry point pauses collection while a command only loads; a handler that allocates
    # must never run with it paused, or a long apply's cyclic garbage would pile up.
    (tmp_path / "rig_config.py").write_text(_GC_CONFIG, encoding="utf-8")
    env = {"RIG_HOME": str(tmp_path / "_home")}
    completed = run_rig("--json", "apply", cwd=tmp_path, env=env, subprocess=True)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["context"] == {"collecting": True, "cycle_freed": True}


def test_an_embedding_host_gets_collection_back_after_main(tmp_path: Path) -> None:
    # main() pauses collection and sets aside (freezes) what a command loaded; a host that calls it
    # in-process must find collection on and nothing left frozen afterwards.
    (tmp_path / "rig_config.py").write_text(_GC_CONFIG, encoding="utf-8")
    script = (
        "import gc, sys\n"
        "from rigcli.__main__ import main\n"
        "code = main(['--json', 'apply'])\n"
        "sys.stderr.write(f'{code} {gc.isenabled()} {gc.get_freeze_count()}\\n')\n"
    )
    env = {**os.environ, "RIG_HOME": str(tmp_path / "_home")}
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.stderr.strip().splitlines()[-1] == "0 True 0", completed.stderr


def test_a_command_that_only_loads_leaves_no_full_collection_pending(tmp_path: Path) -> None:
    # A plan only loads: collection stays paused throughout. Turned back on with the young count
    # as loading left it (tens of thousands), the next allocation would collect every object the
    # command made, at its very end; the entry point resets that count as it gives collection back.
    (tmp_path / "rig_config.py").write_text(_GC_CONFIG, encoding="utf-8")
    script = (
        "import gc, sys\n"
        "from rigcli.__main__ import main\n"
        "code = main(['plan'])\n"
        "young = len(gc.get_objects(0)) + len(gc.get_objects(1))\n"
        "sys.stderr.write(f'{code} {gc.isenabled()} {gc.get_freeze_count()} {young} {len(gc.get_objects())}\\n')\n"
    )
    env = {**os.environ, "RIG_HOME": str(tmp_path / "_home"), "RIG_RENDER": "0"}
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    code, collecting, frozen, young, tracked = completed.stderr.strip().splitlines()[-1].split()
    assert (code, collecting, frozen) == ("0", "True", "0"), completed.stderr
    # What the command made is in the oldest generation, not young objects a collection is about to walk.
    assert int(tracked) > 10_000, completed.stderr
    assert int(young) < 2_000, completed.stderr
