"""Helpers and constants a handler uses, transitively and across project modules, are inputs."""

from __future__ import annotations

import json

import pytest
from fingerprint_support import Projects

from rigcli.fingerprint import describe_handler

SAME_MODULE = """
LIMIT = 3
UNUSED = "x"

def helper2(value):
    return value * LIMIT

def helper(value):
    return helper2(value) + 1

def unrelated():
    return "unrelated"

def install(step):
    return {"ctx": {"n": helper(2)}}
"""


def test_same_module_helpers_count_transitively(projects: Projects) -> None:
    base = {"rig_config.py": SAME_MODULE}
    assert not projects.same(base, {"rig_config.py": SAME_MODULE.replace("value * LIMIT", "value * LIMIT * 2")})
    assert not projects.same(base, {"rig_config.py": SAME_MODULE.replace("+ 1", "+ 2")})
    assert not projects.same(base, {"rig_config.py": SAME_MODULE.replace("LIMIT = 3", "LIMIT = 4")})


def test_unrelated_functions_and_constants_do_not_count(projects: Projects) -> None:
    base = {"rig_config.py": SAME_MODULE}
    assert projects.same(base, {"rig_config.py": SAME_MODULE.replace('"unrelated"', '"changed"')})
    assert projects.same(base, {"rig_config.py": SAME_MODULE.replace('UNUSED = "x"', 'UNUSED = "y"')})
    added = SAME_MODULE + "\ndef brand_new():\n    return helper(3)\n"
    assert projects.same(base, {"rig_config.py": added})


HELPERS = """
LIMIT = 3
OTHER = 10

def inner(value):
    return value * LIMIT

def shared(value):
    return inner(value) + 1

def unrelated():
    return OTHER
"""

ACCESS_STYLES = {
    "import": "import helpers\n\ndef install(step):\n    return {'ctx': {'n': helpers.shared(1)}}\n",
    "alias": "import helpers as h\n\ndef install(step):\n    return {'ctx': {'n': h.shared(1)}}\n",
    "from": "from helpers import shared\n\ndef install(step):\n    return {'ctx': {'n': shared(1)}}\n",
    "local": "def install(step):\n    from helpers import shared\n    return {'ctx': {'n': shared(1)}}\n",
    "local-loaded": (
        "import helpers\n\ndef install(step):\n    from helpers import shared\n    return {'ctx': {'n': shared(1)}}\n"
    ),
}


@pytest.mark.parametrize("style", sorted(ACCESS_STYLES))
def test_helpers_in_another_module_count_transitively(projects: Projects, style: str) -> None:
    config = ACCESS_STYLES[style]
    base = {"rig_config.py": config, "helpers.py": HELPERS}
    assert not projects.same(base, {"rig_config.py": config, "helpers.py": HELPERS.replace("+ 1", "+ 2")})
    inner_changed = HELPERS.replace("value * LIMIT", "value * LIMIT * 2")
    assert not projects.same(base, {"rig_config.py": config, "helpers.py": inner_changed})
    constant_changed = HELPERS.replace("LIMIT = 3", "LIMIT = 4")
    assert not projects.same(base, {"rig_config.py": config, "helpers.py": constant_changed})


@pytest.mark.parametrize("style", sorted(set(ACCESS_STYLES) - {"local"}))
def test_unrelated_code_in_another_module_does_not_count(projects: Projects, style: str) -> None:
    config = ACCESS_STYLES[style]
    base = {"rig_config.py": config, "helpers.py": HELPERS}
    unrelated = HELPERS.replace("return OTHER", "return OTHER + 1").replace("OTHER = 10", "OTHER = 11")
    assert projects.same(base, {"rig_config.py": config, "helpers.py": unrelated})


def test_a_helper_module_imported_only_inside_the_handler_counts_as_a_whole(projects: Projects) -> None:
    # Not loaded yet when the fingerprint is taken, so the file the handler will import is used.
    config = ACCESS_STYLES["local"]
    base = {"rig_config.py": config, "helpers.py": HELPERS}
    assert not projects.same(base, {"rig_config.py": config, "helpers.py": HELPERS + "\nEXTRA = 1\n"})
    commented = HELPERS.replace("OTHER = 10", "OTHER = 10  # a note")
    assert projects.same(base, {"rig_config.py": config, "helpers.py": commented})


PACKAGE_CONFIG = """
import tools.build

def install(step):
    return {"ctx": {"n": tools.build.run(), "k": tools.build.KIND}}
"""
BUILD = """
KIND = "release"

def run():
    return step_one()

def step_one():
    return 1

def other():
    return 2
"""


def test_attribute_chains_through_packages_reach_the_function_used(projects: Projects) -> None:
    base = {"rig_config.py": PACKAGE_CONFIG, "tools/__init__.py": "", "tools/build.py": BUILD}

    def with_build(text: str) -> dict[str, str]:
        return {**base, "tools/build.py": text}

    assert not projects.same(base, with_build(BUILD.replace("return 1", "return 3")))
    assert not projects.same(base, with_build(BUILD.replace('"release"', '"debug"')))
    assert projects.same(base, with_build(BUILD.replace("return 2", "return 4")))
    assert projects.same(base, {**base, "tools/__init__.py": "VERSION = 2\n"})


def test_a_module_passed_as_a_value_counts_as_a_whole(projects: Projects) -> None:
    config = "import helpers\n\ndef install(step):\n    return {'ctx': {'n': len(vars(helpers))}}\n"
    base = {"rig_config.py": config, "helpers.py": HELPERS}
    assert not projects.same(base, {"rig_config.py": config, "helpers.py": HELPERS.replace("return OTHER", "return 0")})


EXTERNAL = """
import json
import os
import subprocess
from json import dumps

def install(step):
    subprocess.run(["true"], check=True)
    home = os.environ.get("HOME")
    return {"ctx": {"a": json.dumps(1), "b": dumps(2), "n": len(home or "")}}
"""


def test_installed_code_contributes_only_its_name(projects: Projects, monkeypatch: pytest.MonkeyPatch) -> None:
    description = projects.describe({"rig_config.py": EXTERNAL})
    entry = description["defs"][0]
    assert entry["globals"]["subprocess.run"] == {"t": "external", "name": "subprocess:run"}
    assert entry["globals"]["json.dumps"] == {"t": "external", "name": "json:dumps"}
    assert entry["globals"]["dumps"] == {"t": "external", "name": "json:dumps"}
    assert entry["globals"]["len"] == {"t": "external", "name": "builtins:len"}
    assert entry["globals"]["os.environ.get"] == {"t": "external", "name": "os:environ.get"}
    assert len(description["defs"]) == 1
    # The process environment is never read into the fingerprint.
    before = projects.fingerprint({"rig_config.py": EXTERNAL})
    monkeypatch.setenv("RIG_FP_SECRET_MARKER", "s3cr3t-value")
    assert projects.fingerprint({"rig_config.py": EXTERNAL}) == before
    assert "s3cr3t-value" not in json.dumps(projects.describe({"rig_config.py": EXTERNAL}))


def test_code_installed_inside_the_project_is_not_project_code(
    projects: Projects, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = ".venv/lib/python3/site-packages"
    config = "import vendored\n\ndef install(step):\n    return {'ctx': {'n': vendored.compute()}}\n"
    descriptions = []
    for body in ("def compute():\n    return 1\n", "def compute():\n    return 2\n"):
        root = projects.write({"rig_config.py": config, f"{site}/vendored.py": body})
        monkeypatch.syspath_prepend(str(root / site))
        descriptions.append(describe_handler(projects.load(root).install, project_dir=root))
    assert descriptions[0]["defs"][0]["globals"]["vendored.compute"] == {"t": "external", "name": "vendored:compute"}
    assert descriptions[0] == descriptions[1]
