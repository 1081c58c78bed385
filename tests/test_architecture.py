"""The layering rule, enforced: no room imports a room above it; Typer, Rich and sqlite3 stay in their rooms.

Rooms, lowest first (a module may import its own room and the rooms below it):

    foundation  errors, jsonutil, statuses, records, events, event_bus, streams, children, layout, masking,
                state_location, _version
    authoring   authoring/, handler_params, provider_api, provider_kit/, host, discovery, config_loader
    keys        graph, fingerprint/, cachekeys
    state       state/
    engine      engine/
    render      render/
    cli         cli/, __main__, the rigcli package itself

Providers (providers/) may import only the provider contract (provider_api, provider_kit) and
the foundation. Every import counts, including those inside functions (rig imports lazily).
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
            "rigcli._version",
            "rigcli.errors",
            "rigcli.jsonutil",
            "rigcli.statuses",
            "rigcli.records",
            "rigcli.events",
            "rigcli.event_bus",
            "rigcli.streams",
            "rigcli.children",
            "rigcli.layout",
            "rigcli.masking",
            "rigcli.state_location",
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
        ),
    ),
    ("keys", ("rigcli.graph", "rigcli.fingerprint", "rigcli.cachekeys")),
    ("state", ("rigcli.state",)),
    ("engine", ("rigcli.engine",)),
    ("render", ("rigcli.render",)),
    ("cli", ("rigcli.cli", "rigcli.__main__", "rigcli")),
)
PROVIDER_ALLOWED = ("rigcli.provider_api", "rigcli.provider_kit", *ROOMS[0][1])
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
    imported: str
    why: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}: {self.why}"


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
