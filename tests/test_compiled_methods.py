"""Dataclass methods compiled once and kept in ``$RIG_HOME/cache/dataclass-code/``: read back, never trusted blindly."""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

from tests.cli.cli_support import DEV_CONFIG, run_rig, write_project

# A fresh interpreter: which texts a process compiles depends on which classes it already made.
MAKE_A_RECORD = """
import sys
from pathlib import Path
from rigcli.speed.compiled_methods import keep_in
from rigcli.speed.records import lazy_dataclass

keep_in(Path(sys.argv[1]))

@lazy_dataclass(frozen=True)
class Box:
    width: int
    label: str = "box"

print(repr(Box(3)), Box(3) == Box(3), hash(Box(3)) == hash(Box(3)))
"""


def _run(cache: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", MAKE_A_RECORD, str(cache)], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def _kept(cache: Path) -> dict[str, object]:
    (file,) = (cache / "dataclass-code").glob("*.marshal")
    kept: dict[str, object] = marshal.loads(file.read_bytes())
    return kept


def test_the_methods_compiled_by_one_process_are_read_back_by_the_next(tmp_path: Path) -> None:
    assert _run(tmp_path) == "Box(width=3, label='box') True True"
    kept = _kept(tmp_path)
    repr_text = next(text for text in kept if "def __repr__" in text)
    init_text = next(text for text in kept if "def __init__" in text and "width" in text)
    assert "label" in init_text
    # Proof that the next process takes the kept code and does not compile the text again:
    # plant, under the very text of __repr__, the code of another one.
    planted = compile(repr_text.replace("return ", "return 'planted' or ", 1), "<string>", "exec", dont_inherit=True)
    kept[repr_text] = planted
    next(iter((tmp_path / "dataclass-code").glob("*.marshal"))).write_bytes(marshal.dumps(kept))
    assert _run(tmp_path) == "planted True True"


def test_a_damaged_cache_is_compiled_around_and_written_anew(tmp_path: Path) -> None:
    (tmp_path / "dataclass-code").mkdir()
    assert _run(tmp_path) == "Box(width=3, label='box') True True"
    (file,) = (tmp_path / "dataclass-code").glob("*.marshal")
    for damage in (b"", b"\x00garbage", marshal.dumps(["not", "a", "dict"]), marshal.dumps({"text": 42})):
        file.write_bytes(damage)
        assert _run(tmp_path) == "Box(width=3, label='box') True True"
        assert any("def __repr__" in text for text in _kept(tmp_path))


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    assert _run(blocked) == "Box(width=3, label='box') True True"
    assert blocked.read_text() == ""


def test_a_cached_plan_keeps_the_records_methods_and_answers_the_same(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", DEV_CONFIG)
    env = {"RIG_HOME": str(tmp_path / "home")}
    assert run_rig("apply", cwd=project, env=env, subprocess=True).returncode == 0
    first = run_rig("plan", cwd=project, env=env, subprocess=True)
    assert first.returncode == 0, first
    kept = _kept(tmp_path / "home" / "cache")
    assert any("def __init__" in text for text in kept)
    again = run_rig("plan", cwd=project, env=env, subprocess=True)
    assert (again.returncode, again.stdout) == (0, first.stdout)
