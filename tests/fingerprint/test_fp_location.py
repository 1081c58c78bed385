"""Where the project lives, and where code sits in a file, never enters the fingerprint."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fingerprint_support import Projects

from rigcli.fingerprint import describe_handler, handler_fingerprint
from rigcli.jsonutil import canonical_json

CONFIG = """
import functools
from pathlib import Path

import helpers
from helpers import Loader

ROOT = Path(__file__).resolve().parent
CACHE_DIR = str(ROOT / ".cache")

def make(level):
    def handler(step):
        return {"ctx": {"level": level, "loader": Loader(ROOT).name}}
    return handler

def install(step, where=CACHE_DIR):
    return {"ctx": {"n": helpers.count(where), "file": __file__, "module": __name__}}

made = make(2)
inline = [lambda step: {"ctx": {"root": str(ROOT)}}, lambda step: helpers.count(CACHE_DIR)]
partial = functools.partial(install, where="elsewhere")
"""
HELPERS = """
import os

class Loader:
    def __init__(self, root):
        self.root = root
        self.name = os.path.basename(str(root)) and "loader"

def count(where):
    return len(os.listdir(where)) if os.path.isdir(where) else 0
"""
TARGETS = ("install", "made", "inline[0]", "inline[1]", "partial")
ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")


def test_moving_the_project_keeps_every_fingerprint(projects: Projects) -> None:
    files = {"rig_config.py": CONFIG, "helpers.py": HELPERS}
    first = projects.write(files)
    module = projects.load(first)
    before = [handler_fingerprint(eval(t, vars(module)), project_dir=first) for t in TARGETS]
    moved = projects.base / "elsewhere" / "renamed-project"
    shutil.copytree(first, moved)
    shutil.rmtree(first)
    module = projects.load(moved)
    after = [handler_fingerprint(eval(t, vars(module)), project_dir=moved) for t in TARGETS]
    assert before == after
    assert len(set(before)) == len(TARGETS)


def test_descriptions_hold_no_paths_addresses_or_line_numbers(projects: Projects) -> None:
    files = {"rig_config.py": CONFIG, "helpers.py": HELPERS}
    root = projects.write(files)
    module = projects.load(root)
    for target in TARGETS:
        text = canonical_json(describe_handler(eval(target, vars(module)), project_dir=root))
        assert str(root) not in text and str(root.resolve()) not in text
        assert str(projects.base) not in text
        assert not ADDRESS.search(text)
        assert "<project>" in text or target == "inline[1]"


def test_a_symlinked_project_dir_gives_the_same_fingerprint(projects: Projects) -> None:
    files = {"rig_config.py": CONFIG, "helpers.py": HELPERS}
    root = projects.write(files)
    link = projects.base / "link"
    link.symlink_to(root, target_is_directory=True)
    module = projects.load(link)
    through_link = handler_fingerprint(module.install, project_dir=link)
    assert through_link == projects.fingerprint(files)


def test_shifting_code_down_the_file_keeps_fingerprints(projects: Projects) -> None:
    shifted = CONFIG.replace("import functools", "import functools\n\n\n# Section: imports\n\n")
    helpers_shifted = "\n\n# Loaders\n" + HELPERS
    for target in TARGETS:
        assert projects.same(
            {"rig_config.py": CONFIG, "helpers.py": HELPERS},
            {"rig_config.py": shifted, "helpers.py": helpers_shifted},
            target,
        ), target


def test_a_module_that_moves_within_the_project_changes_fingerprints(projects: Projects) -> None:
    moved = CONFIG.replace("import helpers\nfrom helpers", "import lib.helpers as helpers\nfrom lib.helpers")
    before = projects.fingerprint({"rig_config.py": CONFIG, "helpers.py": HELPERS})
    after = projects.fingerprint({"rig_config.py": moved, "lib/__init__.py": "", "lib/helpers.py": HELPERS})
    assert before != after


PROCESS_SCRIPT = """
import importlib.util, sys
root = sys.argv[1]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location("rig_config", root + "/rig_config.py")
module = importlib.util.module_from_spec(spec)
sys.modules["rig_config"] = module
spec.loader.exec_module(module)
from rigcli.fingerprint import handler_fingerprint
for name in ("install", "fallback"):
    print(handler_fingerprint(getattr(module, name), project_dir=root))
"""
HASHED = """
KINDS = {"alpha", "beta", "gamma", "delta"}
TABLE = {kind: len(kind) for kind in KINDS}

def install(step):
    return {"ctx": {"ok": step in {"x", "y", "z"}, "kinds": sorted(KINDS), "table": TABLE}}

exec("def fallback(step):\\n    return step in {'x', 'y', 'z'}\\n")
"""


def test_fingerprints_are_the_same_in_every_process(projects: Projects) -> None:
    # String hashing is randomised per process: set and dict orders must not leak through.
    root = projects.write({"rig_config.py": HASHED})
    repo = str(Path(__file__).resolve().parents[2])
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": repo, "PYTHONDONTWRITEBYTECODE": "1"}
        result = subprocess.run(
            [sys.executable, "-c", PROCESS_SCRIPT, str(root)], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
