"""Project source files: read and parsed once, indexed, and dumped in a formatting-free form."""

from __future__ import annotations

import ast
import os
import tokenize
from collections.abc import Sequence
from dataclasses import field

from rigcli.fingerprint.import_statement import Import
from rigcli.speed.digests import sha256
from rigcli.speed.records import lazy_dataclass

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCK_TYPES = (ast.stmt, ast.excepthandler, ast.match_case)
_DOC_OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
# ctx is implied by the node's position; kind only records a redundant u"" prefix.
_SKIPPED_FIELDS = frozenset({"ctx", "kind", "type_comment"})


References = tuple[tuple[tuple[str, ...], ...], tuple[Import, ...]]


@lazy_dataclass
class SourceFile:
    """One parsed file plus the indexes used to find the node behind a code object or class."""

    path: str
    signature: tuple[int, int, int, int]
    tree: ast.Module
    defs: dict[int, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    _lambdas: dict[int, list[ast.Lambda]] = field(default_factory=dict)
    _module_digest: str | None = None
    _references: dict[int, References] = field(default_factory=dict)

    def lambdas_at(self, line: int) -> list[ast.Lambda]:
        """Lambda nodes starting on ``line``, in source order; only its statement is walked."""
        found = self._lambdas.get(line)
        if found is None:
            statements = [s for s in self.tree.body if s.lineno <= line <= (s.end_lineno or s.lineno)]
            nodes = (n for s in statements for n in ast.walk(s))
            found = [n for n in nodes if isinstance(n, ast.Lambda) and n.lineno == line]
            found.sort(key=lambda n: n.col_offset)
            self._lambdas[line] = found
        return found

    def module_digest(self) -> str:
        if self._module_digest is None:
            self._module_digest = digest(self.tree)
        return self._module_digest

    def references(self, node: ast.AST) -> References:
        """Names read in ``node`` (with the attribute chains hanging off them) and its imports."""
        found = self._references.get(id(node))
        if found is None:
            chains: set[tuple[str, ...]] = set()
            imports: list[Import] = []
            _collect(node, chains, imports)
            found = self._references[id(node)] = (tuple(sorted(chains)), tuple(imports))
        return found


_FILES: dict[str, SourceFile] = {}


def load_source(path: str) -> SourceFile | None:
    """The parsed file at ``path``; re-read when its mtime, ctime, size or inode changed (ctime: an
    old mtime put back on new bytes of the same size still moves it)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    signature = (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino)
    cached = _FILES.get(path)
    if cached is not None and cached.signature == signature:
        return cached
    try:
        with tokenize.open(path) as handle:
            text = handle.read()
        tree = ast.parse(text, filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    source = SourceFile(path=path, signature=signature, tree=tree)
    _index(source, tree.body, "")
    _FILES[path] = source
    return source


def _index(source: SourceFile, statements: Sequence[ast.AST], prefix: str) -> None:
    # Only statement lists can hold def and class, so expressions are never walked here.
    # The prefix mirrors how CPython builds __qualname__, so classes can be found by theirs.
    for node in statements:
        if isinstance(node, _DEF_TYPES):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            source.defs.setdefault(first, []).append(node)
            _index(source, node.body, f"{prefix}{node.name}.<locals>.")
        elif isinstance(node, ast.ClassDef):
            source.classes.setdefault(prefix + node.name, []).append(node)
            _index(source, node.body, f"{prefix}{node.name}.")
        else:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, list) and value and isinstance(value[0], _BLOCK_TYPES):
                    _index(source, value, prefix)


def _collect(node: ast.AST, chains: set[tuple[str, ...]], imports: list[Import]) -> None:
    # Only the longest chain is kept: helpers.x must not also count as a use of all of helpers.
    if isinstance(node, ast.Attribute):
        parts = [node.attr]
        inner = node.value
        while isinstance(inner, ast.Attribute):
            parts.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name):
            chains.add((inner.id, *reversed(parts)))
            return
    elif isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load):
            chains.add((node.id,))
        return
    elif isinstance(node, ast.Import):
        imports.extend(Import(alias.name, 0, ()) for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        imports.append(Import(node.module or "", node.level, tuple(alias.name for alias in node.names)))
    for child in ast.iter_child_nodes(node):
        _collect(child, chains, imports)


def digest(node: ast.AST, *, skip_decorators: bool = False) -> str:
    """SHA-256 of ``dump(node)``."""
    return sha256(dump(node, skip_decorators=skip_decorators).encode("utf-8")).hexdigest()


def dump(node: ast.AST, *, skip_decorators: bool = False) -> str:
    """The node's structure without positions, comments, docstrings or empty fields.

    Empty fields are left out so that a Python release adding a field (``type_params`` in
    3.12) or changing ``ast.dump`` defaults (3.13) does not change the text.
    """
    out: list[str] = []
    _emit(node, out, skip_decorators=skip_decorators)
    return "".join(out)


def _emit(node: ast.AST, out: list[str], *, skip_decorators: bool = False) -> None:
    out.append(type(node).__name__)
    out.append("(")
    for name in node._fields:
        if name in _SKIPPED_FIELDS or (skip_decorators and name == "decorator_list"):
            continue
        value = getattr(node, name, None)
        if name == "body" and isinstance(node, _DOC_OWNERS):
            value = _without_docstring(node.body)
        if value is None or (isinstance(value, list) and not value):
            continue
        out.append(name)
        out.append("=")
        if isinstance(value, ast.AST):
            _emit(value, out)
        elif isinstance(value, list):
            out.append("[")
            for item in value:
                if isinstance(item, ast.AST):
                    _emit(item, out)
                else:
                    out.append(repr(item))
                out.append(",")
            out.append("]")
        else:
            out.append(repr(value))
        out.append(",")
    out.append(")")


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr):
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return body[1:]
    return body


def arg_names(node: FunctionNode) -> tuple[str, ...]:
    """Parameter names in ``co_varnames`` order: positional, keyword-only, *args, **kwargs."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return tuple(names)


def find_classes(source: SourceFile, qualname: str, firstlineno: int | None) -> list[ast.ClassDef]:
    """ClassDef nodes for ``qualname``; several when the file defines it conditionally."""
    found = source.classes.get(qualname, [])
    if firstlineno is not None and len(found) > 1:
        # 3.13+ records the class's first line, which settles conditional definitions.
        exact = [n for n in found if min([n.lineno, *(d.lineno for d in n.decorator_list)]) == firstlineno]
        return exact or found
    return found


__all__ = [
    "FunctionNode",
    "Import",
    "References",
    "SourceFile",
    "arg_names",
    "digest",
    "dump",
    "find_classes",
    "load_source",
]
