"""``lazy_dataclass``: a class is made on first use, and then behaves exactly as ``@dataclass`` would."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading
from dataclasses import field
from typing import ClassVar

import pytest

from rigcli.speed.records import lazy_dataclass


def _pending(cls: type) -> bool:
    return "__init__" not in cls.__dict__


@lazy_dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list, compare=False)  # so instances stay hashable


def test_nothing_is_generated_until_the_first_instance() -> None:
    @lazy_dataclass(frozen=True)
    class Late:
        a: int

    assert _pending(Late)
    assert Late(1) == Late(1)
    assert not _pending(Late)


def test_a_made_class_behaves_as_a_frozen_dataclass() -> None:
    point = Point(1, tags=["a"])
    assert point == Point(1, 0, ["a"]) and repr(point) == "Point(x=1, y=0, tags=['a'])"
    assert hash(Point(2)) == hash(Point(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    assert dataclasses.replace(point, y=3) == Point(1, 3, ["a"])
    assert dataclasses.asdict(point) == {"x": 1, "y": 0, "tags": ["a"]}
    assert Point(1).tags is not Point(1).tags  # the default factory runs per instance


def test_asking_for_fields_makes_the_class() -> None:
    @lazy_dataclass
    class Asked:
        a: int
        b: str = "b"

    assert dataclasses.is_dataclass(Asked)
    assert [item.name for item in dataclasses.fields(Asked)] == ["a", "b"]
    assert not _pending(Asked)


def test_subclasses_get_their_bases_fields_whichever_is_made_first() -> None:
    @lazy_dataclass(frozen=True)
    class Base:
        a: int

    @lazy_dataclass(frozen=True)
    class Child(Base):
        b: str = "b"

    class Plain(Base):
        pass

    assert _pending(Base) and _pending(Child)
    assert (
        Child(1, "c") == Child(a=1, b="c")
        and repr(Child(1))
        == "test_subclasses_get_their_bases_fields_whichever_is_made_first.<locals>.Child(a=1, b='b')"
    )
    assert Plain(2).a == 2 and Base(3) == Base(3)


def test_options_are_kept() -> None:
    @lazy_dataclass(eq=False, repr=False)
    class Identity:
        a: int

    one = Identity(1)
    assert one != Identity(1) and one == one
    assert repr(one).startswith("<") and "Identity object" in repr(one)
    one.a = 2  # not frozen
    assert one.a == 2


def test_copies_and_unpickled_instances_are_whole() -> None:
    point = Point(4, 5)
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point


def test_threads_racing_for_the_first_instance_all_get_a_made_one() -> None:
    @lazy_dataclass(frozen=True)
    class Raced:
        a: int
        b: int = 1

    made: list[object] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        try:
            made.extend(Raced(index) for index in range(200))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(made) == 1600 and all(isinstance(item, Raced) and item.b == 1 for item in made)  # type: ignore[attr-defined]


def test_a_class_with_its_own_new_is_made_at_once() -> None:
    class WithNew:
        def __new__(cls, *args: object, **kwargs: object) -> WithNew:
            return super().__new__(cls)

    @lazy_dataclass
    class Derived(WithNew):
        a: int

    assert not _pending(Derived) and Derived(1).a == 1


def test_every_dataclass_of_rig_is_a_lazy_one() -> None:
    # One plain @dataclass on a hot path puts its exec cost back into every command that imports it.
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    plain: list[str] = []
    for path in sorted([*root.joinpath("rigcli").rglob("*.py"), *root.joinpath("providers").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = ast.unparse(target)
                if name in ("dataclass", "dataclasses.dataclass"):
                    plain.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    assert plain == [], "use rigcli.speed.records.lazy_dataclass: " + ", ".join(plain)


@lazy_dataclass(frozen=True)
class Pair:
    left: int
    right: list[int] = field(default_factory=list)


@lazy_dataclass(frozen=True)
class Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")


@lazy_dataclass
class Counted:
    value: int
    seen: int = field(default=0, init=False)


def test_evolve_gives_what_replace_gives_without_calling_init_again() -> None:
    from rigcli.speed.records import evolve

    first = Pair(1, [2])
    changed = evolve(first, left=5)
    assert changed == dataclasses.replace(first, left=5) and type(changed) is Pair
    assert changed.right is first.right and first == Pair(1, [2])  # the original is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.left = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        evolve(first, nope=1)  # a change that names no field fails as replace fails


def test_evolve_leaves_classes_whose_init_does_more_to_replace() -> None:
    from rigcli.speed.records import evolve

    with pytest.raises(ValueError, match="negative"):
        evolve(Checked(1), value=-1)  # __post_init__ still checks
    counted = Counted(1)
    counted.seen = 4
    assert evolve(counted, value=2).seen == 0  # an init=False field starts over, as with replace


def test_a_positional_maker_makes_what_the_class_makes() -> None:
    from rigcli.speed.records import positional_maker

    make = positional_maker(Pair)
    assert make is not Pair  # a plain class gets the quick way
    made = make(1, [2])
    assert made == Pair(1, [2]) and type(made) is Pair and repr(made) == "Pair(left=1, right=[2])"
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.left = 3  # type: ignore[misc]
    assert make(1) == Pair(1)  # fewer values: the class's own __init__ fills in the defaults
    with pytest.raises(TypeError):
        make(1, [2], 3)  # too many: the class's own __init__ says so
    assert positional_maker(Checked) is Checked and positional_maker(Counted) is Counted  # they do more


def test_field_names_of_a_pending_class_are_what_fields_says_and_leave_it_unmade() -> None:
    from rigcli.speed.records import field_names

    @lazy_dataclass
    class Base:
        a: int
        b: str = ""

    @lazy_dataclass
    class Child(Base):
        c: int = 0
        a: int = 1  # overridden: keeps its place, as dataclasses orders it

    @lazy_dataclass
    class WithClassVar:
        kind: ClassVar[str] = "x"
        value: int = 0

    class NotOne:
        a: int

    names = {cls: field_names(cls) for cls in (Base, Child, WithClassVar)}
    assert _pending(Base) and _pending(Child)  # read off the annotations
    assert field_names(NotOne) is None
    for cls, found in names.items():
        assert found == tuple(item.name for item in dataclasses.fields(cls)), cls
    assert names[Child] == ("a", "b", "c")
    assert names[WithClassVar] == ("value",)  # a pseudo-field: the class was made and asked
