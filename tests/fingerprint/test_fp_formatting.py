"""Formatting, comments and docstrings never change a handler's fingerprint; its body does."""

from __future__ import annotations

from fingerprint_support import Projects

BASE = '''
import json

def install(step, box):
    """Install the toolchain."""
    result = box.run(["make", "install"], check=True)
    return {"ctx": {"out": json.dumps(result)}}
'''

REFORMATTED = '''
import json


# Why: the box image ships without make.
def install(step,box):
    """A rewritten docstring
    that spans lines."""

    result = box.run(
        [ "make",
          "install" ],   # the default target
        check = (True),
    )
    return ({"ctx":
             {"out": (json.dumps(result))}})
'''


def test_reformatting_commenting_and_docstrings_keep_the_fingerprint(projects: Projects) -> None:
    assert projects.same({"rig_config.py": BASE}, {"rig_config.py": REFORMATTED})


def test_removing_the_docstring_keeps_the_fingerprint(projects: Projects) -> None:
    without = BASE.replace('    """Install the toolchain."""\n', "")
    assert projects.same({"rig_config.py": BASE}, {"rig_config.py": without})


def test_changing_the_body_changes_the_fingerprint(projects: Projects) -> None:
    for edit in (
        BASE.replace('"install"]', '"all"]'),
        BASE.replace("check=True", "check=False"),
        BASE.replace("json.dumps(result)", "json.dumps(result, indent=2)"),
        BASE.replace("def install(step, box)", "def install(step, box, log)"),
    ):
        assert not projects.same({"rig_config.py": BASE}, {"rig_config.py": edit})


def test_changing_a_statement_order_changes_the_fingerprint(projects: Projects) -> None:
    before = """
    def install(step):
        print("a")
        print("b")
    """
    after = """
    def install(step):
        print("b")
        print("a")
    """
    assert not projects.same({"rig_config.py": before}, {"rig_config.py": after})


def test_the_task_decorator_line_is_not_part_of_the_handler(projects: Projects) -> None:
    before = """
    from rigcli import task

    @task("install", cache_ttl="1d")
    def install(step):
        return {"ctx": {"done": True}}
    """
    after = before.replace('cache_ttl="1d"', 'cache_ttl="7d"')
    assert projects.same({"rig_config.py": before}, {"rig_config.py": after}, "install.handler")
    changed = before.replace("True", "False")
    assert not projects.same({"rig_config.py": before}, {"rig_config.py": changed}, "install.handler")


def test_blank_lines_above_a_handler_keep_the_fingerprint(projects: Projects) -> None:
    before = "LIMIT = 3\n\ndef install(step):\n    return {'ctx': {'n': LIMIT}}\n"
    after = "\n\n\n" + before.replace("\n\ndef", "\n\n\n\n\ndef")
    assert projects.same({"rig_config.py": before}, {"rig_config.py": after})


def test_async_handlers_are_fingerprinted_like_plain_ones(projects: Projects) -> None:
    before = """
    import asyncio

    async def install(step):
        await asyncio.sleep(0)
        return {"ctx": {"n": 1}}
    """
    reformatted = before.replace("await asyncio.sleep(0)", "await asyncio.sleep( 0 )  # yield once")
    changed = before.replace('"n": 1', '"n": 2')
    assert projects.same({"rig_config.py": before}, {"rig_config.py": reformatted})
    assert not projects.same({"rig_config.py": before}, {"rig_config.py": changed})
    sync = before.replace("async def", "def").replace("await asyncio.sleep(0)", "asyncio.sleep(0)")
    assert not projects.same({"rig_config.py": before}, {"rig_config.py": sync})
