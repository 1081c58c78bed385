"""Lambdas, methods, partials, nested functions, classes, decorators and recursion."""

from __future__ import annotations

import sys

import pytest
from fingerprint_support import Projects

from rigcli.fingerprint import handler_fingerprint

LAMBDAS = """
pair = (lambda step: {"n": 1}, lambda step: {"n": 2})
consts = [lambda step: None, lambda step: {}, lambda step: 1, lambda step: 2]
nested = lambda step: (lambda: 1)  # noqa: E731
"""


def test_lambdas_on_one_line_are_told_apart(projects: Projects) -> None:
    targets = ("pair[0]", "pair[1]", "consts[0]", "consts[1]", "consts[2]", "consts[3]", "nested", "nested(0)")
    found = projects.fingerprints({"rig_config.py": LAMBDAS}, *targets)
    assert len(set(found)) == len(targets)
    for target in targets:
        # Found in the source, not described by the bytecode fallback.
        assert "python" not in projects.describe({"rig_config.py": LAMBDAS}, target)["defs"][0], target


def test_closure_lambdas_on_one_line_are_told_apart(projects: Projects) -> None:
    config = "def make(v):\n    return (lambda s: v, lambda s: (v, 1), lambda s: [v])\n\nmade = make(1)\n"
    found = projects.fingerprints({"rig_config.py": config}, "made[0]", "made[1]", "made[2]")
    assert len(set(found)) == 3


def test_a_lambda_keeps_its_fingerprint_when_moved_to_its_own_line(projects: Projects) -> None:
    alone = 'first = lambda step: {"n": 1}\n\n\nsecond = (\n    lambda step: {"n": 2}\n)\n'
    assert projects.fingerprint({"rig_config.py": LAMBDAS}, "pair[0]") == projects.fingerprint(
        {"rig_config.py": alone}, "first"
    )
    assert projects.fingerprint({"rig_config.py": LAMBDAS}, "pair[1]") == projects.fingerprint(
        {"rig_config.py": alone}, "second"
    )


TASKS = """
from rigcli import sequence

workflows = sequence("root").task("a", lambda step: {"ctx": {"a": 1}}).task("b", lambda step: {"ctx": {"b": 2}})
"""
TASKS_REFORMATTED = """
from rigcli import sequence

workflows = (
    sequence("root")
    .task("a", lambda step: {"ctx": {"a": 1}})  # first
    .task("b", lambda step: {"ctx": {"b": (2)}})
)
"""


def test_inline_task_lambdas_work_and_survive_reformatting(projects: Projects) -> None:
    targets = ("workflows.children[0].node.handler", "workflows.children[1].node.handler")
    first, second = projects.fingerprints({"rig_config.py": TASKS}, *targets)
    assert first != second
    assert [first, second] == projects.fingerprints({"rig_config.py": TASKS_REFORMATTED}, *targets)
    changed_first, changed_second = projects.fingerprints(
        {"rig_config.py": TASKS.replace('{"b": 2}', '{"b": 3}')}, *targets
    )
    assert changed_first == first
    assert changed_second != second


METHODS = """
import functools

def helper(value):
    return value + 1

class Installer:
    def __init__(self, level):
        self.level = level

    def run(self, step):
        return {"ctx": {"n": helper(self.level)}}

    @classmethod
    def build(cls, step):
        return {"ctx": {"n": 0}}

    def unused(self):
        return 1

class Unrelated:
    def go(self):
        return 1

def configured(step, mode):
    return {"ctx": {"mode": mode}}

installer = Installer(1)
bound = installer.run
partial_a = functools.partial(configured, mode="a")
"""


@pytest.mark.parametrize(
    ("target", "old", "new"),
    [
        ("bound", "Installer(1)", "Installer(2)"),
        ("bound", "helper(self.level)", "helper(self.level) * 2"),
        ("bound", "return value + 1", "return value + 2"),
        ("Installer.build", '"n": 0', '"n": -1'),
        ("partial_a", 'mode="a"', 'mode="b"'),
        ("partial_a", '{"mode": mode}', '{"mode": mode, "x": 1}'),
    ],
)
def test_methods_and_partials_change_with_what_they_run(projects: Projects, target: str, old: str, new: str) -> None:
    assert not projects.same({"rig_config.py": METHODS}, {"rig_config.py": METHODS.replace(old, new)}, target)


def test_unrelated_classes_do_not_count(projects: Projects) -> None:
    changed = METHODS.replace("def go(self):\n        return 1", "def go(self):\n        return 2")
    assert projects.same({"rig_config.py": METHODS}, {"rig_config.py": changed}, "partial_a")


CLASS_USER = """
class Builder:
    FLAGS = ("-O2",)

    def build(self):
        return list(self.FLAGS)

def install(step):
    return {"ctx": {"flags": Builder().build()}}
"""


def test_a_class_the_handler_uses_counts_by_its_methods_source(projects: Projects) -> None:
    base = {"rig_config.py": CLASS_USER}
    assert not projects.same(base, {"rig_config.py": CLASS_USER.replace("list(self.FLAGS)", "tuple(self.FLAGS)")})
    assert not projects.same(base, {"rig_config.py": CLASS_USER.replace('"-O2"', '"-O3"')})
    assert projects.same(base, {"rig_config.py": CLASS_USER.replace("def build(self):", "def build( self ):")})


NESTED = """
def outer():
    def install(step):
        return {"ctx": {"n": 1}}
    return install

install = outer()
"""


def test_nested_functions_are_found_and_compared_by_body(projects: Projects) -> None:
    base = {"rig_config.py": NESTED}
    assert not projects.same(base, {"rig_config.py": NESTED.replace('"n": 1', '"n": 2')})
    assert projects.same(base, {"rig_config.py": NESTED.replace("def outer():", "def outer():  # factory")})


DECORATED = """
import functools

def traced(label):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            print(label)
            return fn(*args, **kwargs)
        return wrapper
    return decorate

@traced("install")
def install(step):
    return {"ctx": {"n": 1}}

@functools.lru_cache(maxsize=None)
def cached(step):
    return {"ctx": {"n": 1}}
"""


@pytest.mark.parametrize(
    ("target", "old", "new"),
    [
        ("install", '"n": 1}}\n\n@functools', '"n": 2}}\n\n@functools'),  # the wrapped function
        ("install", "print(label)", "print(label, flush=True)"),  # the decorator
        ("install", '@traced("install")', '@traced("setup")'),  # the decorator's argument
        ("cached", 'def cached(step):\n    return {"ctx": {"n": 1}}', "def cached(step):\n    return {}"),
    ],
)
def test_decorated_handlers_count_the_wrapped_function_and_the_decorator(
    projects: Projects, target: str, old: str, new: str
) -> None:
    assert old in DECORATED
    assert not projects.same({"rig_config.py": DECORATED}, {"rig_config.py": DECORATED.replace(old, new)}, target)


RECURSIVE = """
def countdown(n):
    return countdown(n - 1) if n else ping(3)

def ping(n):
    return pong(n - 1) if n else 0

def pong(n):
    return ping(n)

class Node:
    def walk(self):
        return Node().walk()

def install(step):
    return {"ctx": {"n": countdown(3), "t": Node}}
"""


def test_recursion_and_cycles_terminate(projects: Projects) -> None:
    description = projects.describe({"rig_config.py": RECURSIVE})
    names = [entry["name"].split(":")[1] for entry in description["defs"]]
    assert names[0] == "install"
    assert sorted(names) == ["Node", "countdown", "install", "ping", "pong"]  # each described once
    changed = RECURSIVE.replace("pong(n - 1)", "pong(n - 2)")
    assert not projects.same({"rig_config.py": RECURSIVE}, {"rig_config.py": changed})


def test_functions_without_source_fall_back_to_bytecode(projects: Projects) -> None:
    config = 'exec("def install(step):\\n    return {\\"n\\": 1}\\n")\n'
    description = projects.describe({"rig_config.py": config})
    assert description["defs"][0]["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert not projects.same({"rig_config.py": config}, {"rig_config.py": config.replace("1", "2")})


def test_fingerprints_accept_any_callable(projects: Projects) -> None:
    fn, root = projects.handler({"rig_config.py": "import json\ninstall = json.dumps\n"})
    assert handler_fingerprint(fn, project_dir=root).startswith("sha256-")
    assert handler_fingerprint(print, project_dir=root) != handler_fingerprint(len, project_dir=root)
