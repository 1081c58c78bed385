"""Closure values, defaults and non-JSON values enter the fingerprint with stable descriptions."""

from __future__ import annotations

import re

import pytest
from fingerprint_support import Projects

from rigcli.jsonutil import canonical_json

FACTORY = """
def make(value, suffix="a"):
    def install(step):
        return {"ctx": {"v": value, "s": suffix}}
    return install

one = make(1)
one_again = make(1)
two = make(2)
other_suffix = make(1, suffix="b")
"""


def test_closure_values_distinguish_handlers_from_one_factory(projects: Projects) -> None:
    one, one_again, two, other_suffix = projects.fingerprints(
        {"rig_config.py": FACTORY}, "one", "one_again", "two", "other_suffix"
    )
    assert one == one_again
    assert len({one, two, other_suffix}) == 3


def test_closure_values_are_described_by_value(projects: Projects) -> None:
    closure = projects.describe({"rig_config.py": FACTORY}, "two")["defs"][0]["closure"]
    assert closure == {"value": 2, "suffix": "a"}


DEFAULTS = """
RETRIES = 3

def install(step, retries=RETRIES, *, mode="fast", labels=("a", "b")):
    return {"ctx": {"r": retries, "m": mode, "l": list(labels)}}
"""


def test_default_and_keyword_only_default_values_count(projects: Projects) -> None:
    base = {"rig_config.py": DEFAULTS}
    for old, new in (("RETRIES = 3", "RETRIES = 4"), ('"fast"', '"slow"'), ('("a", "b")', '("a", "c")')):
        assert not projects.same(base, {"rig_config.py": DEFAULTS.replace(old, new)})
    entry = projects.describe(base)["defs"][0]
    assert entry["defaults"] == [3]
    assert entry["kwdefaults"] == {"labels": {"t": "tuple", "items": ["a", "b"]}, "mode": "fast"}


VALUES = """
import enum
import dataclasses
from pathlib import Path
from pydantic import BaseModel

HERE = Path(__file__).parent
DATA = HERE / "data"
TAGS = {"b", "a", "c"}
RAW = b"\\x00\\x01"
INF = float("inf")

class Color(enum.Enum):
    RED = 1
    BLUE = 2

@dataclasses.dataclass
class Settings:
    name: str
    level: int = 1

class Options(BaseModel):
    label: str = "marked"
    count: int = 1

class Opaque:
    pass

SETTINGS = Settings("web")
OPAQUE = Opaque()
OPAQUE.limit = 5
COLOR = Color.RED

def install(step):
    return {"ctx": [DATA, TAGS, RAW, INF, SETTINGS, OPAQUE, COLOR, Options, str(HERE)]}
"""


def test_non_json_values_have_stable_descriptions(projects: Projects) -> None:
    description = projects.describe({"rig_config.py": VALUES})
    text = canonical_json(description)
    assert not re.search(r"0x[0-9a-fA-F]{4,}", text), "no memory addresses"
    found = description["defs"][0]["globals"]
    assert found["DATA"]["repr"] == "PosixPath('<project>/data')"
    assert found["TAGS"] == {"t": "set", "items": ["a", "b", "c"]}
    assert found["RAW"] == {"t": "bytes", "hex": "0001"}
    assert found["INF"] == {"t": "float", "repr": "inf"}
    assert found["HERE"]["repr"] == "PosixPath('<project>')"
    assert found["SETTINGS"]["fields"] == {"name": "web", "level": 1}
    assert found["OPAQUE"]["state"] == {"limit": 5}
    assert found["COLOR"]["name"] == "RED"
    assert found["Options"]["t"] == "ref"


def test_changing_a_non_json_value_changes_the_fingerprint(projects: Projects) -> None:
    base = {"rig_config.py": VALUES}
    for old, new in (
        ('TAGS = {"b", "a", "c"}', 'TAGS = {"b", "a", "d"}'),
        ('HERE / "data"', 'HERE / "cache"'),
        ('Settings("web")', 'Settings("api")'),
        ("OPAQUE.limit = 5", "OPAQUE.limit = 6"),
        ("COLOR = Color.RED", "COLOR = Color.BLUE"),
        ('label: str = "marked"', 'label: str = "plain"'),
        ("RED = 1", "RED = 3"),
    ):
        assert not projects.same(base, {"rig_config.py": VALUES.replace(old, new)}), old


def test_set_order_does_not_matter(projects: Projects) -> None:
    base = {"rig_config.py": VALUES}
    assert projects.same(base, {"rig_config.py": VALUES.replace('{"b", "a", "c"}', '{"c", "b", "a"}')})


MODELS = """
from pydantic import BaseModel

class Used(BaseModel):
    label: str = "marked"

class Unused(BaseModel):
    label: str = "marked"

def install(step):
    return {"ctx": Used().model_dump()}
"""


def test_a_project_model_class_counts_by_its_source(projects: Projects) -> None:
    base = {"rig_config.py": MODELS}
    used = MODELS.replace('label: str = "marked"', 'label: str = "other"', 1)
    unused = MODELS[::-1].replace('"dekram" = rts :lebal', '"rehto" = rts :lebal', 1)[::-1]
    assert not projects.same(base, {"rig_config.py": used})
    assert projects.same(base, {"rig_config.py": unused})
    reformatted = MODELS.replace("class Used(BaseModel):", "class Used( BaseModel ):  # the output")
    assert projects.same(base, {"rig_config.py": reformatted})


def test_self_referencing_values_terminate(projects: Projects) -> None:
    config = """
    LOOP = [1]
    LOOP.append(LOOP)
    TABLE = {}
    TABLE["self"] = TABLE

    def install(step):
        return {"ctx": {"n": len(LOOP) + len(TABLE)}}
    """
    found = projects.describe({"rig_config.py": config})["defs"][0]["globals"]
    assert found["LOOP"] == {"t": "list", "items": [1, {"t": "cycle"}]}
    assert found["TABLE"] == {"t": "dict", "items": [["self", {"t": "cycle"}]]}


INSTALLED_VALUES = """
import fractions
import threading
from os import environ

RATIO = fractions.Fraction(1, 3)
LOCK = threading.Lock()

def install(step):
    return {"ctx": {"r": float(RATIO), "l": LOCK.locked(), "e": len(environ)}}
"""


def test_installed_objects_count_by_type_and_stable_repr_only(
    projects: Projects, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIG_FP_MARKER", "marker-value-123")
    base = {"rig_config.py": INSTALLED_VALUES}
    found = projects.describe(base)["defs"][0]["globals"]
    assert found["RATIO"] == {
        "t": "object",
        "type": {"t": "external", "name": "fractions:Fraction"},
        "repr": "Fraction(1, 3)",
    }
    assert set(found["LOCK"]) == {"t", "type"}  # its repr shows an address
    assert set(found["environ"]) == {"t", "type"}  # its repr is the process environment
    assert "marker-value-123" not in canonical_json(found)
    assert not projects.same(base, {"rig_config.py": INSTALLED_VALUES.replace("(1, 3)", "(1, 4)")})
