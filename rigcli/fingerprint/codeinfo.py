"""What a code object contributes on its own: its normalised source and the names it reads.

Working that out from source parses the file (``fingerprint/source.py``, which imports ``ast``);
the answer is kept across runs while the file keeps its ``stat`` (``speed/file_facts.py``), so a
cached plan of an unchanged config imports no ``ast``.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Iterator
from types import CodeType
from typing import TYPE_CHECKING, cast

from rigcli.fingerprint.import_statement import Import
from rigcli.speed import file_facts
from rigcli.speed.digests import sha256
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    import ast
    import dis

    from rigcli.fingerprint.source import FunctionNode, SourceFile
else:
    ast = lazy_module("ast")
    dis = lazy_module("dis")


PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08  # inspect.CO_*, without importing inspect
_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_IMPORT_TAIL = frozenset({"IMPORT_FROM", "STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})


@lazy_dataclass(frozen=True)
class CodeInfo:
    """The formatting-free identity of a code object and the global names it reads."""

    digest: str  # of the normalised AST, or of the bytecode when ``from_bytecode``
    from_bytecode: bool
    chains: tuple[tuple[str, ...], ...]  # ("helpers", "x") for helpers.x, ("CONST",) for CONST
    imports: tuple[Import, ...]


# Keyed by id() with a finalizer rather than by the code object, because code objects
# compare by value and two equal ones from different files must not share an entry.
_CACHE: dict[int, CodeInfo] = {}


def code_info(code: CodeType, filename: str | None) -> CodeInfo:
    """The cached ``CodeInfo`` of ``code``; ``filename`` is its source, or None to use bytecode."""
    info = _CACHE.get(id(code))
    if info is None:
        info = _compute(code, filename)
        _CACHE[id(code)] = info
        weakref.finalize(code, _CACHE.pop, id(code), None)
    return info


def _compute(code: CodeType, filename: str | None) -> CodeInfo:
    if filename is None:
        return _from_bytecode(code)
    key = f"code-info/1\0{code.co_name}\0{code.co_firstlineno}\0{bytecode_digest(code)}"
    kept = _unkept(file_facts.recall(filename, key))
    if kept is not None:
        return kept
    stamp = file_facts.stamp_of(filename)
    info = _from_source(code, filename)
    if not info.from_bytecode:
        file_facts.remember(filename, key, _kept(info), stamp=stamp)
    return info


_Kept = tuple[str, tuple[tuple[str, ...], ...], tuple[tuple[str, int, tuple[str, ...]], ...]]


def _kept(info: CodeInfo) -> _Kept:
    return (info.digest, info.chains, tuple((i.module, i.level, i.names) for i in info.imports))


def _unkept(kept: object) -> CodeInfo | None:
    if kept is None:
        return None
    try:
        digest, chains, imports = cast(_Kept, kept)
        return CodeInfo(digest, False, chains, tuple(Import(module, level, names) for module, level, names in imports))
    except (TypeError, ValueError):  # not what _kept wrote: work it out again
        return None


def _from_bytecode(code: CodeType) -> CodeInfo:
    chains, imports = _bytecode_references(code)
    return CodeInfo(bytecode_digest(code), True, chains, imports)


def _from_source(code: CodeType, filename: str) -> CodeInfo:
    from rigcli.fingerprint.source import digest, load_source

    source = load_source(filename)
    node = find_function(source, code) if source is not None else None
    if source is None or node is None:
        return _from_bytecode(code)
    # The AST says how a name is used (helpers.x vs helpers); co_names says it is not a
    # local, parameter or closure variable. Both together need no bytecode decoding.
    names = {name for inner in nested_codes(code) for name in inner.co_names}
    chains, imports = source.references(node)
    chains = tuple(chain for chain in chains if chain[0] in names)
    return CodeInfo(digest(node, skip_decorators=True), False, chains, imports)


def nested_codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and every code object compiled inside it (nested functions, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from nested_codes(const)


def _bytecode_references(code: CodeType) -> tuple[tuple[tuple[str, ...], ...], tuple[Import, ...]]:

    chains: set[tuple[str, ...]] = set()
    imports: list[Import] = []
    for inner in nested_codes(code):
        instructions = list(dis.get_instructions(inner))
        for index, ins in enumerate(instructions):
            if ins.opname in _GLOBAL_LOADS:
                # helpers.x.y compiles to a global load followed by attribute loads.
                chain = [str(ins.argval)]
                for follower in instructions[index + 1 :]:
                    if follower.opname not in _ATTR_LOADS:
                        break
                    chain.append(str(follower.argval))
                chains.add(tuple(chain))
            elif ins.opname == "IMPORT_NAME":
                before = instructions[index - 2] if index >= 2 else None
                level = before.argval if before is not None and isinstance(before.argval, int) else 0
                names: list[str] = []
                for follower in instructions[index + 1 :]:
                    if follower.opname not in _IMPORT_TAIL:
                        break
                    if follower.opname == "IMPORT_FROM":
                        names.append(str(follower.argval))
                imports.append(Import(str(ins.argval), level, tuple(names)))
    return tuple(sorted(chains)), tuple(imports)


def find_function(source: SourceFile, code: CodeType) -> FunctionNode | None:
    """The def or lambda node that compiled to ``code``, or None when the file no longer matches."""
    from rigcli.fingerprint.source import arg_names, dump

    params = code.co_varnames[: _arg_count(code)]
    if code.co_name != "<lambda>":
        for node in source.defs.get(code.co_firstlineno, []):
            if node.name == code.co_name and arg_names(node) == params:
                return node
        return None
    candidates = [n for n in source.lambdas_at(code.co_firstlineno) if arg_names(n) == params]
    if len(candidates) > 1:
        candidates = _by_position(candidates, code) or candidates
    if len(candidates) > 1:
        compiled = [(n, _standalone(n)) for n in candidates]
        alike = [(n, alone) for n, alone in compiled if _alike(alone, code)]
        # Without free variables the standalone compile is byte-identical to the real one.
        exact = [n for n, alone in alike if alone.co_code == code.co_code]
        candidates = exact if len(exact) == 1 else [n for n, _ in alike]
    if len(candidates) > 1 and len({dump(n) for n in candidates}) > 1:
        return None
    return candidates[0] if candidates else None


def _arg_count(code: CodeType) -> int:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
    return count


def _by_position(candidates: list[ast.Lambda], code: CodeType) -> list[ast.Lambda]:
    """Lambdas whose body holds every instruction position of ``code``, innermost first (3.11+)."""
    positions_of = getattr(code, "co_positions", None)
    if positions_of is None:
        return []
    spans = [
        ((line, col), (end_line, end_col))
        for line, end_line, col, end_col in positions_of()
        if line is not None
        and end_line is not None
        and col is not None
        and end_col is not None
        and (line, col) != (end_line, end_col)  # empty spans mark RESUME and friends
    ]
    if not spans:
        return []
    inside = []
    for node in candidates:
        body = node.body
        start = (body.lineno, body.col_offset)
        end = (body.end_lineno or body.lineno, body.end_col_offset or 0)
        if all(start <= first and last <= end for first, last in spans):
            inside.append((start, node))
    inside.sort(key=lambda item: item[0], reverse=True)
    return [node for _, node in inside[:1]]


def _standalone(node: ast.Lambda) -> CodeType:

    compiled = compile(ast.Expression(body=node), "<fingerprint>", "eval", dont_inherit=True)
    return next(c for c in compiled.co_consts if isinstance(c, CodeType))


def _alike(alone: CodeType, real: CodeType) -> bool:
    # Compiled on its own, a lambda reads its free variables as globals; allow for that.
    if alone.co_varnames[: _arg_count(alone)] != real.co_varnames[: _arg_count(real)]:
        return False
    names, free = set(real.co_names), set(real.co_freevars)
    if not names <= set(alone.co_names) <= names | free:
        return False
    alone_consts = [c for c in alone.co_consts if not isinstance(c, CodeType)]
    real_consts = [c for c in real.co_consts if not isinstance(c, CodeType)]
    if alone_consts != real_consts:
        return False
    alone_inner = [c for c in alone.co_consts if isinstance(c, CodeType)]
    real_inner = [c for c in real.co_consts if isinstance(c, CodeType)]
    return len(alone_inner) == len(real_inner) and all(map(_alike, alone_inner, real_inner))


def bytecode_digest(code: CodeType) -> str:
    """Digest of the bytecode and everything it refers to, leaving out line numbers."""
    parts: list[str] = []
    _bytecode_parts(code, parts)
    return sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _bytecode_parts(code: CodeType, parts: list[str]) -> None:
    parts.append(code.co_code.hex())
    parts.extend(repr(v) for v in (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars))
    parts.append(repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)))
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _bytecode_parts(const, parts)
        else:
            parts.append(_const_repr(const))


def _const_repr(value: object) -> str:
    # frozenset constants (``x in {"a", "b"}``) iterate in hash order, which varies per process.
    if isinstance(value, frozenset):
        return "frozenset(" + repr(sorted(_const_repr(v) for v in value)) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(_const_repr(v) for v in value) + ")"
    return repr(value)


__all__ = ["PYTHON", "CodeInfo", "bytecode_digest", "code_info", "find_function", "nested_codes"]
