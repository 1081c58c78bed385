"""Real projects in tmp dirs for fingerprint tests, imported afresh the way rig loads them."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from rigcli.fingerprint import describe_handler, handler_fingerprint
from rigcli.jsonutil import JsonValue

_COUNTER = itertools.count()


class Projects:
    """Writes projects (one fresh directory per version) and imports their rig_config.py.

    Like the config loader, every load drops the modules imported from earlier projects, so
    ``import helpers`` reads this project's helpers.py; rig_config gets a unique module name.
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.roots: list[Path] = []

    def write(self, files: Mapping[str, str], *, at: Path | None = None) -> Path:
        root = at if at is not None else self.base / f"project{next(_COUNTER)}"
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
        self.roots.append(root)
        return root

    def load(self, root: Path, config: str = "rig_config.py") -> ModuleType:
        self.forget()
        self.roots.append(root)  # also projects copied or linked by a test, for forget()
        name = f"rig_config_fp{next(_COUNTER)}"
        spec = importlib.util.spec_from_file_location(name, root / config)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(root))
        importlib.invalidate_caches()
        dont_write = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            spec.loader.exec_module(module)
        finally:
            sys.dont_write_bytecode = dont_write
            sys.path.remove(str(root))
        return module

    def forget(self) -> None:
        roots = tuple(os.path.realpath(root) + os.sep for root in self.roots)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and os.path.realpath(file).startswith(roots):
                del sys.modules[name]

    def handler(self, files: Mapping[str, str], target: str = "install") -> tuple[Any, Path]:
        root = self.write(files)
        module = self.load(root)
        return eval(target, vars(module)), root

    def fingerprint(self, files: Mapping[str, str], target: str = "install") -> str:
        fn, root = self.handler(files, target)
        return handler_fingerprint(fn, project_dir=root)

    def fingerprints(self, files: Mapping[str, str], *targets: str) -> list[str]:
        """Fingerprints of several handlers from one load of one project."""
        root = self.write(files)
        module = self.load(root)
        return [handler_fingerprint(eval(t, vars(module)), project_dir=root) for t in targets]

    def same(self, before: Mapping[str, str], after: Mapping[str, str], target: str = "install") -> bool:
        """Whether ``target`` keeps its fingerprint when the project changes from before to after."""
        return self.fingerprint(before, target) == self.fingerprint(after, target)

    def describe(self, files: Mapping[str, str], target: str = "install") -> JsonValue:
        fn, root = self.handler(files, target)
        return describe_handler(fn, project_dir=root)
