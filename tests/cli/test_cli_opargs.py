"""The operation input parser on its own: schema -> fields, words -> values, and its usage errors."""

from __future__ import annotations

from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from rigcli import Arg, WorkspaceRef
from rigcli.cli.opargs import fields_from_schema, option_rows, parse_operation_args, usage_line
from rigcli.errors import UsageError


class Color(str, Enum):
    red = "red"
    blue = "blue"


class Inputs(BaseModel):
    target: str = Arg(position=0, description="what to hit")
    extra: list[str] = Arg(default_factory=list, position=1)
    dry_run: bool = False
    verbose: bool = True
    count: int = Field(1, description="how many")
    ratio: float | None = None
    mode: Literal["fast", "slow"] = "fast"
    color: Color = Color.red
    peer: WorkspaceRef | None = None
    tags: list[str] = []
    payload: dict[str, int] = {}


FIELDS = fields_from_schema(Inputs.model_json_schema())


def parse(*words: str) -> dict[str, object]:
    parsed = parse_operation_args("op", FIELDS, list(words))
    return parsed.values


def test_fields_from_the_schema() -> None:
    by_name = {item.name: item for item in FIELDS}
    assert by_name["target"].position == 0 and by_name["target"].required
    assert by_name["extra"].kind == "array" and by_name["extra"].position == 1
    assert (by_name["dry_run"].kind, by_name["dry_run"].flag) == ("boolean", "--dry-run")
    assert by_name["count"].kind == "integer" and by_name["count"].description == "how many"
    assert by_name["ratio"].kind == "number" and not by_name["ratio"].required
    assert by_name["mode"].choices == ("fast", "slow")
    assert by_name["color"].choices == ("red", "blue")
    assert by_name["peer"].kind == "workspace"
    assert by_name["payload"].kind == "json"
    assert fields_from_schema(None) == []


def test_values_are_typed() -> None:
    assert parse("x", "--dry-run", "--no-verbose", "--count", "3", "--ratio=0.5", "--mode", "slow") == {
        "target": "x",
        "dry_run": True,
        "verbose": False,
        "count": 3,
        "ratio": 0.5,
        "mode": "slow",
    }
    assert parse("x", "--color", "blue", "--peer", "dev", "--payload", '{"a": 1}') == {
        "target": "x",
        "color": "blue",
        "peer": "dev",
        "payload": {"a": 1},
    }


def test_repeatable_and_trailing_positionals() -> None:
    assert parse("x", "a", "b", "--tags", "t1", "--tags=t2") == {
        "target": "x",
        "extra": ["a", "b"],
        "tags": ["t1", "t2"],
    }
    assert parse("--", "--looks-like-a-flag") == {"target": "--looks-like-a-flag"}
    assert parse("x", "--count", "-2") == {"target": "x", "count": -2}


def test_help_is_noticed_not_parsed() -> None:
    parsed = parse_operation_args("op", FIELDS, ["--help"])
    assert parsed.help
    assert [item.name for item in parsed.missing(FIELDS)] == ["target"]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["x", "--nope"], "Unknown option --nope for operation op"),
        (["x", "--count"], "--count requires a value"),
        (["x", "--count", "--dry-run"], "--count requires a value"),
        (["x", "--count", "two"], "--count expects a whole number"),
        (["x", "--ratio", "half"], "--ratio expects a number"),
        (["x", "--dry-run=perhaps"], "--dry-run expects true or false"),
        (["x", "--mode", "warp"], "--mode must be one of: fast, slow (got 'warp')"),
        (["x", "--payload", "{"], "--payload expects JSON for operation op"),
        (["x", "--no-count"], "Unknown option --no-count for operation op"),
    ],
)
def test_usage_errors(words: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(*words)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


def test_unexpected_positional() -> None:
    with pytest.raises(UsageError, match="Unexpected positional argument b for operation plain"):
        parse_operation_args("plain", [], ["b"])


def test_help_text() -> None:
    assert usage_line("rig op dev hit", FIELDS) == "rig op dev hit TARGET [EXTRA...] [OPTIONS]"
    rows = {row[0]: row for row in option_rows(FIELDS)}
    assert rows["--dry-run / --no-dry-run"][2] == "false"
    assert rows["--mode"][1] == "fast|slow"
    assert rows["target"][2] == "required"
    assert rows["--peer"][1] == "workspace name"
