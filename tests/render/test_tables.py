"""Tables as a user reads them off a pipe: the plan table, ages, and operation results."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

from rich.console import Console

from rigcli.engine.results import PlanNode, WorkflowPlan
from rigcli.records import Reason
from rigcli.render.tables import format_age, print_plan, print_value


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None, force_terminal=False), out


def test_the_plan_table_says_which_run_is_reused_and_why_the_rest_is_pending() -> None:
    plan = WorkflowPlan(
        "web",
        [
            PlanNode(1, "base.install", "install", "cached", Reason("cached", "cached"), "0123456789abcdef", []),
            PlanNode(2, "join", "join", "pending", Reason("upstream-changed", "an upstream task ran again"), None, []),
        ],
        None,
        [
            {
                "provider_id": "docker",
                "id": "login",
                "label": "Registry login",
                "status": "required",
                "message": "run rig op",
            }
        ],
    )
    console, out = _console()
    print_plan(plan.to_json(), console=console)
    lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert lines[0] == "web  1/2 cached"
    assert any("docker" in line and "Registry login" in line and "required" in line for line in lines)
    rows = [line.split() for line in lines if line.lstrip()[:1].isdigit()]
    assert rows[0] == ["1", "cached", "base.install", "run", "01234567"]  # a run id shows its first 8 characters
    assert rows[1][:3] == ["2", "pending", "join"] and " ".join(rows[1][3:]) == "an upstream task ran again"


def test_format_age() -> None:
    now = datetime.now(timezone.utc)
    assert format_age((now - timedelta(seconds=5)).isoformat()) == "just now"
    assert format_age((now - timedelta(minutes=5, seconds=1)).isoformat()) == "5m ago"
    assert format_age((now - timedelta(hours=3, minutes=1)).isoformat()) == "3h ago"
    assert format_age((now - timedelta(days=2, hours=1)).isoformat()) == "2d ago"
    assert format_age("yesterday-ish") == "yesterday-ish"
    assert format_age(None) == ""


def test_operation_results_print_strings_as_they_are_and_the_rest_as_json() -> None:
    console, out = _console()
    print_value("[not markup] plain", console=console)
    print_value({"b": 1, "a": [True, None]}, console=console)
    print_value(None, console=console)
    assert out.getvalue() == '[not markup] plain\n{\n  "b": 1,\n  "a": [\n    true,\n    null\n  ]\n}\n'
