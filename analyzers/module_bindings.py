"""What a module binds at its own level, for the unbound-name rule (unbound_names.py): any
binding in a statement at module level but in function and class bodies, any `global`
declaration anywhere, any import; unknown (None) at a star import, a dynamic binding of globals
or a text that does not parse.

Read one top-level statement at a time wherever the split is the parser's own: from the parts
every whole-module reader shares (module_ast.py), or, where only the view's statement spans are
known, from each statement's text (statement_bindings.py); anywhere else from the whole module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

from argus.analyzers.module_ast import module_tree, part_answers, split_known
from argus.analyzers.statement_bindings import bindings_by_statement, parse_alone, splittable, statement_texts

#: text without a match holds no `global` statement and no star import (a `\` line join may
#: stand between `import` and `*`)
_MAY_DECLARE = re.compile(rb"\bglobal\b|\bimport\b[\s\\(]*\*")
_DYNAMIC = (b"globals(", b"vars(", b"exec(", b"setattr(", b"sys.modules", b"__dict__", b"__builtins__")


def module_bindings(source: bytes, statements: Sequence[tuple[int, int]] | None = None) -> frozenset[str] | None:
    """Every name the module binds at its own level (or declares `global` anywhere); None when
    that cannot be known from the text (a star import, a dynamic binding, or no parse).
    `statements`: the byte spans of the module's top-level statements, as a parser without
    errors split them (the language server's tree-sitter tree): each is then read on its own
    and remembered by its text (statement_bindings.py), the same answer at the cost of the
    statements an edit changed."""
    if any(marker in source for marker in _DYNAMIC):
        return None
    if split_known(source):  # the parts every whole-module reader shares (module_ast.py)
        return _bindings_of_parts(source)
    if statements is not None and splittable(source):
        return bindings_by_statement(statement_texts(source, statements), _contribution)
    tree = module_tree(source)  # (shared, read-only: module_ast.py)
    if tree is None:
        return None
    found = _declared(tree, source)
    if found is None:
        return None
    out = set(found)
    for stmt in tree.body:
        out.update(_bound_at_module_level(stmt))
    return frozenset(out)


def _declared(tree: ast.Module, source: bytes) -> set[str] | None:
    """The names `global` statements anywhere in `tree` declare; None at a star import. (A walk
    of the whole tree costs more than its parse: done only where the text has a `global` or a
    star import somewhere, in code, a comment or a string alike.)"""
    return _declared_in(tree) if _MAY_DECLARE.search(source) is not None else set()


def _declared_in(tree: ast.Module) -> set[str] | None:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            out.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
    return out


def _bindings_of_parts(source: bytes) -> frozenset[str] | None:
    """`module_bindings` from the module's parts, each part's share kept on it (the statements
    an edit did not change are not read again)."""
    declares = _MAY_DECLARE.search(source) is not None
    answers = part_answers(source, ("module_bindings", declares), lambda part: _part_bindings(part, declares))
    if answers is None:
        return None
    out: set[str] = set()
    for names, star in answers:
        if star:
            return None
        out.update(names)
    return frozenset(out)


def _part_bindings(part: ast.Module, declares: bool) -> tuple[frozenset[str], bool]:
    found = _declared_in(part) if declares else set()
    if found is None:
        return frozenset(), True
    for stmt in part.body:
        found.update(_bound_at_module_level(stmt))
    return frozenset(found), False


def _contribution(text: bytes) -> tuple[frozenset[str], bool] | None:
    """One top-level statement's part of `module_bindings`: (names, whether it star-imports);
    None when it does not parse."""
    tree = parse_alone(text)
    if tree is None:
        return None
    found = _declared(tree, text)
    if found is None:
        return frozenset(), True
    for stmt in tree.body:
        found.update(_bound_at_module_level(stmt))
    return frozenset(found), False


def _bound_at_module_level(stmt: ast.stmt) -> Iterator[str]:
    """Names a module-level statement binds, descending into compound statements but not into
    function, class or lambda bodies (their names are theirs)."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        yield from names_bound_by(node)
        todo.extend(ast.iter_child_nodes(node))


def names_bound_by(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.Global | ast.Nonlocal):
        yield from node.names
    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            yield alias.asname or alias.name.split(".")[0]
    elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest
    elif isinstance(node, ast.arg):
        yield node.arg


#: the node types besides `Name` and `arg` for which `names_bound_by` yields anything
BINDING_TYPES = frozenset(
    {
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.Global,
        ast.Nonlocal,
        ast.Import,
        ast.ImportFrom,
        ast.ExceptHandler,
        ast.MatchAs,
        ast.MatchStar,
        ast.MatchMapping,
    }
)
