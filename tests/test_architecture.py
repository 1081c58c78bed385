"""The layering rule, enforced: no room imports a room above it; Typer, Rich and sqlite3 stay in their rooms;
no import cycles and no module over MAX_LINES lines where the house is already clear of them.

Rooms, lowest first (a module may import its own room and the rooms below it):

    foundation  speed/, errors, jsonutil, statuses, records, run_ids, events, event_bus, streams, children, layout,
                masking, sanitize, state_location, timeouts, wording, _version
    authoring   authoring/, handler_params, provider_api, provider_kit/, host, discovery, config_loader, load_inputs
    keys        graph, fingerprint/, cachekeys
    state       state/
    devcontainer devcontainer/ (a configuration as a workflow; its locations are authoring's, for discovery)
    engine      engine/, connect/
    cache       cache/ (answers a load gave, remembered: it computes them with the engine)
    render      render/
    cli         cli/, __main__, the rigcli package itself

Providers (providers/) may import only the provider contract (provider_api, provider_kit) and
the foundation (the speed room included). Every import counts, including those inside functions
(rig imports lazily).

The speed room (rigcli/speed/) sits at the very bottom: it imports nothing of rig's outside
itself, and it alone may touch the garbage collector (``gc``) or write ``sys.modules``
(assignment, ``del``, ``.pop``, ``.setdefault``, ``.update`` ...): those techniques live there,
each with the reason it exists, instead of in whichever room needed one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

ROOMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "rigcli.speed",
            "rigcli._version",
            "rigcli.errors",
            "rigcli.jsonutil",
            "rigcli.statuses",
            "rigcli.records",
            "rigcli.run_ids",
            "rigcli.events",
            "rigcli.event_bus",
            "rigcli.streams",
            "rigcli.children",
            "rigcli.layout",
            "rigcli.masking",
            "rigcli.state_location",
            "rigcli.sanitize",
            "rigcli.timeouts",
            "rigcli.wording",
        ),
    ),
    (
        "authoring",
        (
            "rigcli.authoring",
            "rigcli.handler_params",
            "rigcli.provider_api",
            "rigcli.provider_kit",
            "rigcli.host",
            "rigcli.discovery",
            "rigcli.config_loader",
            "rigcli.devcontainer.locations",
            "rigcli.load_inputs",
        ),
    ),
    ("keys", ("rigcli.graph", "rigcli.fingerprint", "rigcli.cachekeys")),
    ("state", ("rigcli.state",)),
    ("devcontainer", ("rigcli.devcontainer",)),
    ("engine", ("rigcli.engine", "rigcli.connect")),
    ("cache", ("rigcli.cache",)),
    ("render", ("rigcli.render",)),
    ("cli", ("rigcli.cli", "rigcli.__main__", "rigcli")),
)
PROVIDER_ALLOWED = ("rigcli.provider_api", "rigcli.provider_kit", *ROOMS[0][1])  # the speed room included
SPEED_ROOM = "rigcli.speed"
# Calling one of these on sys.modules writes it.
_MODULES_WRITERS = frozenset({"pop", "popitem", "setdefault", "update", "clear", "__setitem__", "__delitem__"})
# Third-party and stdlib modules that belong to one room only.
CONFINED = {
    "typer": ("rigcli.cli",),
    "rich": ("rigcli.render",),
    "sqlite3": ("rigcli.state",),
    "psycopg": ("rigcli.state.postgres",),  # the PostgreSQL driver: behind the dialect seam only
    # The schema's description (a test dependency); nothing in rig imports it, see TESTS_ONLY.
    "sqlmodel": ("rigcli.state.tables",),
    "sqlalchemy": ("rigcli.state.tables",),
}
TESTS_ONLY = ("rigcli.state.tables",)  # rig's own modules that only tests may import


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    imported: str  # the module imported, or the use of a speed technique ("gc.collect", "del sys.modules")
    why: str
    verb: str = "imports"

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.verb} {self.imported}: {self.why}"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def room_of(module: str) -> int | None:
    """The index of the room ``module`` lives in (the most specific prefix wins), or None."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(ROOMS):
        for prefix in prefixes:
            if _within(module, prefix) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _is_lazy_module(node: ast.AST) -> bool:
    """``lazy_module("name")`` (speed/lazy_modules.py): an import, made on first use."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "lazy_module"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def imports_of(source: str, module: str) -> Iterable[tuple[int, str]]:
    """(line, imported module) for every import statement, resolving relative ones."""
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:  # `from rigcli import engine` imports the engine room
                yield node.lineno, f"{base}.{alias.name}"
        elif _is_lazy_module(node):
            yield node.lineno, node.args[0].value  # type: ignore[attr-defined]  # named at the top, imported on first use


def check(modules: Mapping[str, str]) -> list[Violation]:
    """Every layering or confinement violation in ``{module name: source}``."""
    found: list[Violation] = []
    for module, source in sorted(modules.items()):
        name = module.removesuffix(".__init__")
        own_room = room_of(name)
        for line, imported in imports_of(source, module):
            top = imported.split(".")[0]
            if top in CONFINED and not any(_within(name, room) for room in CONFINED[top]):
                found.append(Violation(name, line, imported, f"{top} belongs to {', '.join(CONFINED[top])} only"))
            if top == "providers" and name.startswith("rigcli"):
                found.append(Violation(name, line, imported, "rigcli finds providers through entry points only"))
            if top != "rigcli":
                continue
            if any(_within(imported, only) for only in TESTS_ONLY):
                found.append(Violation(name, line, imported, "only tests may import it"))
            if name.startswith("providers"):
                if imported != "rigcli" and not any(_within(imported, allowed) for allowed in PROVIDER_ALLOWED):
                    found.append(Violation(name, line, imported, "providers use provider_api/provider_kit only"))
                continue
            target_room = room_of(imported)
            if own_room is None or target_room is None or imported == "rigcli":
                continue
            if target_room > own_room:
                found.append(
                    Violation(name, line, imported, f"{ROOMS[own_room][0]} must not import {ROOMS[target_room][0]}")
                )
    return found


def speed_violations(modules: Mapping[str, str]) -> list[Violation]:
    """``gc`` use and ``sys.modules`` writes outside the speed room; rig imports from inside it."""
    found: list[Violation] = []
    for module, source in sorted(modules.items()):
        name = module.removesuffix(".__init__")
        if _within(name, SPEED_ROOM):
            found += [
                Violation(name, line, imported, "the speed room imports nothing of rig's outside itself")
                for line, imported in imports_of(source, module)
                if imported.split(".")[0] == "rigcli" and not _within(imported, SPEED_ROOM)
            ]
            continue
        if name.startswith(("rigcli", "providers")):
            found += [
                Violation(name, line, what, why, "uses") for line, what, why in _speed_techniques(ast.parse(source))
            ]
    return found


def _speed_techniques(tree: ast.AST) -> Iterable[tuple[int, str, str]]:
    """(line, what, why) for each use of ``gc`` and each write to ``sys.modules`` in ``tree``."""
    gc_names, sys_names, modules_names = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "gc":
                    gc_names.add(alias.asname or "gc")
                    yield node.lineno, "import gc", "gc belongs to rigcli.speed (gc_policy) only"
                elif alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in ("gc", "sys"):
            for alias in node.names:
                if node.module == "gc":
                    yield node.lineno, f"from gc import {alias.name}", "gc belongs to rigcli.speed (gc_policy) only"
                elif alias.name == "modules":
                    modules_names.add(alias.asname or "modules")

    def is_modules(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in modules_names
        return (
            isinstance(expr, ast.Attribute)
            and expr.attr == "modules"
            and isinstance(expr.value, ast.Name)
            and expr.value.id in sys_names
        )

    why = "sys.modules is written only in rigcli.speed (imports)"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in gc_names:
            yield node.lineno, f"gc.{node.attr}", "gc belongs to rigcli.speed (gc_policy) only"
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if (isinstance(target, ast.Subscript) and is_modules(target.value)) or is_modules(target):
                verb = "del" if isinstance(node, ast.Delete) else "assigns"
                yield node.lineno, f"{verb} sys.modules", why
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MODULES_WRITERS
            and is_modules(node.func.value)
        ):
            yield node.lineno, f"sys.modules.{node.func.attr}", why


def import_edges(source: str, module: str, known: set[str]) -> set[str]:
    """The modules among ``known`` that ``module`` imports, anywhere in it (inside functions and
    ``if TYPE_CHECKING:`` too). ``from package import name`` imports the submodule when ``name`` is one,
    the package's ``__init__`` otherwise; relative imports are resolved; ``module`` names a package's
    ``__init__`` as ``package.__init__`` or ``package``."""
    name = module.removesuffix(".__init__")
    package = name if module.endswith("__init__") or module in _packages(known) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif _is_lazy_module(node):  # a module named at the top, imported on first use
            targets = [node.args[0].value]  # type: ignore[attr-defined]
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a name inside a.b: the module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _packages(known: set[str]) -> set[str]:
    return {item.rpartition(".")[0] for item in known if "." in item}


def import_cycles(modules: Mapping[str, str]) -> list[list[str]]:
    """Every import cycle among ``{module name: source}``: each strongly connected set of two or more
    modules (or one importing itself), sorted. A package's ``__init__`` is the package's own name."""
    known = {module.removesuffix(".__init__") for module in modules}
    graph = {name.removesuffix(".__init__"): import_edges(source, name, known) for name, source in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):  # Tarjan's algorithm, iterative: no recursion limit on a deep import chain
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    cycles.append(sorted(component))
    return sorted(cycles)


def long_modules(modules: Mapping[str, str], limit: int) -> dict[str, int]:
    """``{module: lines}`` for each module longer than ``limit`` lines."""
    counts = {module: len(source.splitlines()) for module, source in modules.items()}
    return {module: lines for module, lines in sorted(counts.items()) if lines > limit}


def _tree_modules() -> dict[str, str]:
    modules: dict[str, str] = {}
    for top in ("rigcli", "providers"):
        for path in (REPO / top).rglob("*.py"):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            modules[name] = path.read_text(encoding="utf-8")
    return modules


def test_every_module_lives_in_a_room() -> None:
    homeless = [name for name in _tree_modules() if name.startswith("rigcli") and room_of(name) is None]
    assert homeless == []


def test_no_room_imports_a_room_above_it_and_libraries_stay_in_their_rooms() -> None:
    violations = check(_tree_modules())
    assert [str(item) for item in violations] == []


def test_the_check_catches_a_forbidden_import() -> None:
    modules = _tree_modules()
    modules["rigcli.state.runs"] += "\nfrom rigcli.engine.results import PlanNode\n"
    modules["rigcli.engine.planner"] += "\ndef _peek():\n    import rich\n"
    modules["rigcli.render.tables"] += "\nimport sqlite3\n"
    modules["rigcli.cachekeys"] += "\nfrom rigcli import render\n"
    modules["providers.local.store"] += "\nfrom rigcli.state import create_state_store\n"
    modules["rigcli.state.migrations"] += "\nimport sqlmodel\nfrom rigcli.state import tables\n"
    found = {(item.module, item.imported) for item in check(modules)}
    assert found == {
        ("rigcli.state.runs", "rigcli.engine.results"),
        ("rigcli.state.runs", "rigcli.engine.results.PlanNode"),
        ("rigcli.engine.planner", "rich"),
        ("rigcli.render.tables", "sqlite3"),
        ("rigcli.cachekeys", "rigcli.render"),
        ("providers.local.store", "rigcli.state"),
        ("providers.local.store", "rigcli.state.create_state_store"),
        ("rigcli.state.migrations", "sqlmodel"),
        ("rigcli.state.migrations", "rigcli.state.tables"),
    }


def test_gc_and_sys_modules_writes_live_in_the_speed_room_only() -> None:
    violations = speed_violations(_tree_modules())
    assert [str(item) for item in violations] == []


def test_the_check_catches_gc_and_sys_modules_writes_outside_the_speed_room() -> None:
    modules = _tree_modules()
    modules["rigcli.engine.planner"] += "\ndef _tidy():\n    import gc\n    gc.collect()\n"
    modules["rigcli.cli.session"] += "\nfrom gc import freeze\n"
    modules["rigcli.config_loader"] += "\ndef _drop(name):\n    del sys.modules[name]\n"
    modules["rigcli.state.store"] += "\nimport sys as system\nsystem.modules['x'] = None\n"
    modules["rigcli.render.live"] += "\nimport sys\nsys.modules.pop('x', None)\nsys.modules.setdefault('y', None)\n"
    modules["rigcli.graph"] += "\nfrom sys import modules as loaded\nloaded.update({})\n"
    modules["providers.docker.httpx_lib"] += "\nsys.modules['trio'] = None\n"
    modules["rigcli.speed.gc_policy"] += "\nfrom rigcli.errors import RigError\n"
    found = {(item.module, item.imported) for item in speed_violations(modules)}
    assert found == {
        ("rigcli.engine.planner", "import gc"),
        ("rigcli.engine.planner", "gc.collect"),
        ("rigcli.cli.session", "from gc import freeze"),
        ("rigcli.config_loader", "del sys.modules"),
        ("rigcli.state.store", "assigns sys.modules"),
        ("rigcli.render.live", "sys.modules.pop"),
        ("rigcli.render.live", "sys.modules.setdefault"),
        ("rigcli.graph", "sys.modules.update"),
        ("providers.docker.httpx_lib", "assigns sys.modules"),
        ("rigcli.speed.gc_policy", "rigcli.errors"),
        ("rigcli.speed.gc_policy", "rigcli.errors.RigError"),
    }


MAX_LINES = 450


# Where the house is already clear of cycles and long modules: what these tests hold to it.
def test_no_import_cycles_in_rigcli_or_the_providers() -> None:
    assert import_cycles(_tree_modules()) == []


def test_no_module_of_rigcli_or_the_providers_is_over_the_line_limit() -> None:
    assert long_modules(_tree_modules(), MAX_LINES) == {}


def test_the_cycle_check_finds_cycles_through_functions_type_checking_and_package_inits() -> None:
    modules = {
        "pkg.__init__": "from pkg.a import run\n",
        "pkg.a": "def run():\n    from pkg import helper\n",  # a name of the package: its __init__
        "pkg.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "pkg.c": "from pkg import b\n",  # a submodule, not the package's __init__
        "pkg.d": "from . import e\n",
        "pkg.e": "import os\nfrom pkg.d import thing\n",
        "pkg.f": "from pkg import a\n",  # into a cycle, not part of one
    }
    assert import_cycles(modules) == [["pkg", "pkg.a"], ["pkg.b", "pkg.c"], ["pkg.d", "pkg.e"]]
    assert import_cycles({"pkg.__init__": "", "pkg.a": "from pkg import b\n", "pkg.b": ""}) == []


def test_the_line_limit_counts_every_line() -> None:
    assert long_modules({"a": "x\n" * 450, "b": "x\n" * 451}, 450) == {"b": 451}


def test_the_bounds_on_waits_are_read_in_one_module() -> None:
    """rigcli/timeouts.py alone names the variables (a string that is exactly one of them, anywhere else, reads it)."""
    from rigcli.timeouts import DEFAULTS

    naming = sorted(
        name
        for name, source in _tree_modules().items()
        if name != "rigcli.timeouts"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and node.value in DEFAULTS
    )
    assert naming == []


# -- the house's numbers -------------------------------------------------------------------------------
MAX_FUNCTION_IMPORTS = 150  # imports inside functions outside the speed room and the cache package
ENGINE_PARTS = (
    "Project", "Planner", "Workspaces", "Lifecycle", "Forks", "Drift", "Reaper",
    "Operations", "CacheAdmin", "Garbage", "Diagnosis", "History", "Pictures",
)  # fmt: skip


def function_imports(modules: Mapping[str, str]) -> list[tuple[str, int]]:
    """(module, line) of every import statement inside a function, outside rigcli.speed and rigcli.cache."""
    found: list[tuple[str, int]] = []
    for name, source in sorted(modules.items()):
        if _within(name, SPEED_ROOM) or _within(name, "rigcli.cache"):
            continue
        inner: dict[int, int] = {}
        for function in ast.walk(ast.parse(source)):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        inner[id(node)] = node.lineno
        found += [(name, line) for line in sorted(inner.values())]
    return found


def test_imports_inside_functions_stay_few() -> None:
    found = function_imports(_tree_modules())
    assert len(found) <= MAX_FUNCTION_IMPORTS, f"{len(found)} imports inside functions: {found}"


def test_the_function_import_count_sees_nested_functions_once() -> None:
    source = "def f():\n    import os\n    def g():\n        import sys\n"
    assert function_imports({"rigcli.x": source, "rigcli.speed.y": source}) == [("rigcli.x", 2), ("rigcli.x", 4)]


def engine_verbs(modules: Mapping[str, str]) -> dict[str, int]:
    """Each public method of the engine's parts, and how many times rigcli.engine spells it (``def``)."""
    engine = {
        name: source for name, source in modules.items() if _within(name.removesuffix(".__init__"), "rigcli.engine")
    }
    trees = [ast.parse(source) for source in engine.values()]
    verbs = {
        item.name
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name in ENGINE_PARTS
        for item in node.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_")
    }
    spelled = dict.fromkeys(verbs, 0)
    # Spelled: a method of the Engine protocol, of the engine that answers it, or of a part.
    speakers = {*ENGINE_PARTS, "Engine", "ProjectEngine"}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in speakers:
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in spelled:
                        spelled[item.name] += 1
    return spelled


def forwarders(modules: Mapping[str, str]) -> list[str]:
    """The parts' verbs the engine (``ProjectEngine``) spells too: forwarders."""
    verbs = set(engine_verbs(modules))
    return sorted(
        item.name
        for source in modules.values()
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef) and node.name == "ProjectEngine"
        for item in node.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in verbs
    )


def test_each_engine_verb_is_spelled_at_most_twice() -> None:
    """Its Protocol and its implementation: no forwarder between the CLI and the part that owns it."""
    modules = _tree_modules()
    spelled = engine_verbs(modules)
    assert len(spelled) > 40, sorted(spelled)  # the parts' verbs were found
    assert {verb: count for verb, count in spelled.items() if count > 2} == {}
    assert forwarders(modules) == []


def test_the_verb_check_finds_a_forwarder() -> None:
    modules = _tree_modules()
    facade = modules["rigcli.engine.facade"]
    modules["rigcli.engine.facade"] = facade.replace(
        "    def run(self,",
        "    async def plan(self, workflow=None):\n"
        "        return await self.planner.plan(workflow)\n\n"
        "    def run(self,",
    )
    assert forwarders(modules) == ["plan"]


def test_the_projects_env_file_is_read_in_one_module() -> None:
    readers = sorted(
        {
            name
            for name, source in _tree_modules().items()
            for node in ast.walk(ast.parse(source))
            if (
                isinstance(node, (ast.Import, ast.ImportFrom))
                and any(
                    part.split(".")[0] == "dotenv"
                    for part in (
                        [node.module or ""]
                        if isinstance(node, ast.ImportFrom)
                        else [alias.name for alias in node.names]
                    )
                )
            )
            or (_is_lazy_module(node) and node.args[0].value == "dotenv")  # type: ignore[attr-defined]
        }
    )
    assert readers == ["rigcli.discovery"]
