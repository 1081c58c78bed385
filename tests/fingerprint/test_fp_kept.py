"""What a handler's source says is kept while its file is unchanged, and worked out again once it changes."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FunctionType

import pytest

from rigcli.fingerprint import codeinfo, source
from rigcli.fingerprint.codeinfo import CodeInfo, code_info
from rigcli.speed import file_facts

_SOURCE = """
# helpers: a global the functions read; never imported here, as nothing runs them


def task(step, *, log=None):
    from os import path as p
    import json
    return helpers.settings.value + len(json.dumps(p.sep))


pick = lambda step: helpers.pick(step)
"""


@pytest.fixture
def kept_in(tmp_path: Path) -> Iterator[Path]:
    place = tmp_path / "facts.marshal"
    file_facts.keep_in(str(place))
    yield place
    file_facts.keep_in(str(tmp_path / "elsewhere.marshal"))


def _functions(path: Path, text: str) -> dict[str, CodeType]:
    path.write_text(text, encoding="utf-8")
    namespace: dict[str, object] = {"__name__": "kept_config"}
    exec(compile(text, str(path), "exec"), namespace)
    return {name: value.__code__ for name, value in namespace.items() if isinstance(value, FunctionType)}


def _fresh(code: CodeType, path: Path) -> CodeInfo:
    codeinfo._CACHE.pop(id(code), None)
    return code_info(code, str(path))


def test_a_kept_answer_is_what_parsing_the_file_gives(
    kept_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rig_config.py"
    functions = _functions(path, _SOURCE)
    parsed = {name: _fresh(code, path) for name, code in functions.items()}
    assert all(not info.from_bytecode for info in parsed.values())
    assert ("helpers", "settings", "value") in parsed["task"].chains and parsed["task"].imports
    file_facts._write()  # what the process would write at exit
    file_facts.keep_in(str(tmp_path / "other.marshal"))
    file_facts.keep_in(str(kept_in))  # read back from the file, as the next run would

    def no_parsing(_: str) -> None:
        raise AssertionError("the file was parsed again")

    monkeypatch.setattr(source, "load_source", no_parsing)
    assert {name: _fresh(code, path) for name, code in functions.items()} == parsed


def test_an_edited_file_is_worked_out_again(kept_in: Path, tmp_path: Path) -> None:
    path = tmp_path / "rig_config.py"
    before = _fresh(_functions(path, _SOURCE)["task"], path)
    edited = _SOURCE.replace("helpers.settings.value", "helpers.settings.other")
    code = _functions(path, edited)["task"]
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a later edit, even on a coarse clock
    after = _fresh(code, path)
    assert ("helpers", "settings", "other") in after.chains
    assert after.digest != before.digest
    file_facts.keep_in(str(tmp_path / "unkept.marshal"))  # nothing kept: parse it
    assert _fresh(code, path) == after


def test_a_damaged_facts_file_only_means_parsing_again(kept_in: Path, tmp_path: Path) -> None:
    kept_in.write_bytes(b"not marshal at all")
    path = tmp_path / "rig_config.py"
    info = _fresh(_functions(path, _SOURCE)["task"], path)
    assert not info.from_bytecode and ("helpers", "settings", "value") in info.chains


def test_an_edit_that_keeps_size_and_mtime_is_worked_out_again(kept_in: Path, tmp_path: Path) -> None:
    # rsync -t, tar or `touch -r` can put an old mtime back on new bytes of the same length; the
    # change time cannot be set back, so the stamp holds it too.
    path = tmp_path / "rig_config.py"
    before = _fresh(_functions(path, _SOURCE)["task"], path)
    stat = path.stat()
    time.sleep(0.02)  # past a coarse file clock's tick, so the rewrite's change time is a later one
    same_size = _SOURCE.replace("helpers.settings.value", "helpers.settings.VALUE")
    code = _functions(path, same_size)["task"]
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ino,
    )
    after = _fresh(code, path)
    assert ("helpers", "settings", "VALUE") in after.chains
    assert after.digest != before.digest
