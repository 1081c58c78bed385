"""Off a terminal, tables are written without Rich: the text must be exactly what Rich would print."""

from __future__ import annotations

import io

import pytest

from rigcli.engine.results import PlanNode, WorkflowPlan
from rigcli.records import Reason
from rigcli.render.console import make_console
from rigcli.render.tables import print_kv, print_message, print_next_steps, print_plan, print_table, print_value

TABLES = [
    (
        ["#", "status", "node", "reason"],
        [[1, "cached", "base.install", "run 0123abcd"], [2, "pending", "x", "no previous run"]],
    ),
    (
        ["workspace", "workflow", "status", "created"],
        [["dev", "web", "ready", "just now"], ["été-日本", "api", None, ""]],
    ),
    (["option", "type", "default", "description"], [["--label", "string", "marked", ""]]),
    (["a"], [["only"]]),
]


def _plain(monkeypatch: pytest.MonkeyPatch, draw: object) -> str:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    draw()  # type: ignore[operator]
    return out.getvalue()


def _rich(draw: object) -> str:
    out = io.StringIO()
    draw(make_console(out))  # type: ignore[operator]
    return out.getvalue()


@pytest.mark.parametrize(("columns", "rows"), TABLES)
def test_a_plain_table_is_what_rich_prints(
    monkeypatch: pytest.MonkeyPatch, columns: list[str], rows: list[list[object]]
) -> None:
    plain = _plain(monkeypatch, lambda: print_table(columns, rows, empty="none", title="Title"))
    assert plain == _rich(lambda console: print_table(columns, rows, empty="none", title="Title", console=console))
    assert plain.splitlines()[0] == "Title"


def test_an_empty_table_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _plain(monkeypatch, lambda: print_table(["a"], [], empty="no workspaces")) == "no workspaces\n"


def test_a_plain_plan_is_what_rich_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = WorkflowPlan(
        "web",
        [
            PlanNode(index, f"node.{index}", "n", "cached", Reason("cached", "cached"), f"{index:016x}", [])
            for index in range(1, 12)
        ],
        None,
        [{"provider_id": "docker", "id": "daemon", "status": "ok", "value": "unix:///var/run/docker.sock"}],
    )
    plain = _plain(monkeypatch, lambda: print_plan(plan.to_json()))
    assert plain == _rich(lambda console: print_plan(plan.to_json(), console=console))
    assert plain.startswith("web  11/11 cached\nprovider   check    status   current")


def test_other_plain_output_is_what_rich_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = [("project", "/p"), ("config", "/p/rig_config.py"), ("state", None)]
    assert _plain(monkeypatch, lambda: print_kv(pairs)) == _rich(lambda console: print_kv(pairs, console=console))
    value = {"ok": True, "items": [1, "two"]}
    assert _plain(monkeypatch, lambda: print_value(value)) == _rich(lambda console: print_value(value, console=console))
    assert _plain(monkeypatch, lambda: print_value("[bold]as is[/bold]")) == "[bold]as is[/bold]\n"
    assert _plain(monkeypatch, lambda: print_message("done", err=False)) == "done\n"
    steps = [("rig op dev shell", "Open a shell"), ("rig rm dev", "Remove this workspace")]
    assert _plain(monkeypatch, lambda: print_next_steps(steps, err=False)) == (
        "Next\n  rig op dev shell  Open a shell\n  rig rm dev        Remove this workspace\n"
    )
