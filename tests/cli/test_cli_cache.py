"""rig cache ls | explain | invalidate | clear: JSON shapes, human output and guards."""

from __future__ import annotations

from tests.cli.conftest import Rig


def _applied(rig: Rig) -> Rig:
    result = rig("apply")
    assert result.returncode == 0, result
    return rig


def test_cache_ls(rig: Rig) -> None:
    assert rig("cache", "ls", "--json").json == {"entries": []}
    assert "no cache entries" in rig("cache", "ls").stdout
    entries = _applied(rig)("cache", "ls", "--json").json["entries"]
    assert sorted(entry["node_path"] for entry in entries) == ["base", "tools"]
    for entry in entries:
        assert set(entry) >= {"scope", "node_path", "run_id", "invalidated", "created_at"}
        assert entry["scope"] == "local" and entry["invalidated"] is False
    human = rig("cache", "ls")
    assert "cached" in human.stdout and "base" in human.stdout


def test_explain(rig: Rig) -> None:
    document = rig("cache", "explain", "--json").json
    assert document["workflow"] == "dev"
    assert [(item["path"], item["status"], item["reason"]["code"]) for item in document["explanations"]] == [
        ("base", "pending", "no-previous-run"),
        ("tools", "pending", "upstream-pending"),
    ]
    for item in document["explanations"]:
        assert set(item["reason"]) >= {"code", "message"}
    one = _applied(rig)("cache", "explain", "tools", "--json").json
    assert [(item["path"], item["status"], item["reason"]["code"]) for item in one["explanations"]] == [
        ("tools", "cached", "cached"),
    ]
    unknown = rig("cache", "explain", "nope")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error: Workflow dev has no task nope")


def test_invalidate_one_task_cascades(rig: Rig) -> None:
    _applied(rig)
    result = rig("cache", "invalidate", "base", "--json")
    assert result.returncode == 0, result
    assert result.json["invalidated"] >= 1
    plan = rig("plan", "--json").json
    assert [node["status"] for node in plan["nodes"]] == ["pending", "pending"]
    assert plan["nodes"][0]["reason"]["code"] == "invalidated"
    human = _applied(rig)("cache", "invalidate", "tools")
    assert human.stderr.startswith("✓ invalidated 1 cache entry")


def test_invalidate_unknown_task_is_an_error_naming_close_matches(rig: Rig) -> None:
    _applied(rig)
    result = rig("cache", "invalidate", "tool")
    assert result.returncode == 1, result
    assert result.stderr == "error: Workflow dev has no task tool; did you mean tools?\n"
    assert rig("cache", "invalidate", "missing-task", "--json").returncode == 1


def test_invalidating_a_task_with_nothing_cached_is_zero_not_an_error(rig: Rig) -> None:
    result = rig("cache", "invalidate", "tools", "--json")
    assert result.returncode == 0, result
    assert result.json == {"invalidated": 0}


def test_invalidate_all_requires_yes(rig: Rig) -> None:
    _applied(rig)
    refused = rig("cache", "invalidate", "--all")
    assert refused.returncode == 1
    assert refused.stderr == (
        "error: cache invalidate --all requires --yes when not running in an interactive terminal\n"
    )
    assert rig("plan", "--json").json["cached_node_count"] == 2
    done = rig("cache", "invalidate", "--all", "--yes", "--json")
    assert done.returncode == 0 and done.json == {"invalidated": 2}
    assert rig("plan", "--json").json["cached_node_count"] == 0


def test_invalidate_usage_errors(rig: Rig) -> None:
    both = rig("cache", "invalidate", "base", "--all")
    assert both.returncode == 2
    assert both.stderr == "error: cache invalidate accepts either a task or --all, not both\n"
    neither = rig("cache", "invalidate")
    assert neither.returncode == 2
    assert "needs a task name or --all" in neither.stderr


def test_clear(rig: Rig) -> None:
    _applied(rig)
    assert rig("cache", "clear", "--global", "--yes", "--json").json == {"deleted": 0}
    assert rig("cache", "clear", "--local", "--yes", "--json").json == {"deleted": 2}
    assert rig("cache", "ls", "--json").json == {"entries": []}
    _applied(rig)
    human = rig("cache", "clear", "-y")
    assert human.returncode == 0 and human.stderr == "Cleared 2 cache entries.\n"
    both = rig("cache", "clear", "--local", "--global")
    assert both.returncode == 2
    assert both.stderr == "error: Choose --local or --global, not both\n"


def test_clear_like_invalidate_all_needs_yes_without_a_terminal(rig: Rig) -> None:
    _applied(rig)
    refused = rig("cache", "clear")
    assert refused.returncode == 1
    assert refused.stderr == "error: cache clear requires --yes when not running in an interactive terminal\n"
    assert rig("--json", "cache", "clear").returncode == 1
    assert rig("plan", "--json").json["cached_node_count"] == 2


def test_cache_without_subcommand_shows_help(rig: Rig) -> None:
    result = rig("cache")
    assert result.returncode == 0
    assert "invalidate" in result.stdout
