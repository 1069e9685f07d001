"""Ranks a launcher states by testing them: `assert x.ndim == 4`, `assert q.dim() == 3 and ...`,
`assert len(g.shape) == 4`, `if x.dim() != 3: raise ...`.

A launcher that unpacks only part of a shape (`T = x.shape[1]`) leaves its tensor's rank open,
and the probe then either guesses it or leaves the tensor's extent unjudged. A test of the rank
that refuses every other rank states it as surely as `B, T, D = x.shape` does: the tensor has
exactly that many dimensions (launcher_reads.py reads it like an unpacking).
"""

from __future__ import annotations

import ast

from argus.analyzers.model.guard_tests import conjuncts, disjuncts
from argus.analyzers.model.nodes import subtree


def asserted_ranks(func: ast.FunctionDef, names: set[str]) -> dict[str, int]:
    """Parameter -> the rank an assert (or an `if ...: raise`) of the launcher fixes."""
    out: dict[str, int] = {}
    for n in subtree(func):
        if isinstance(n, ast.Assert):
            tests, want = conjuncts(n.test), ast.Eq
        elif isinstance(n, ast.If) and n.body and isinstance(n.body[-1], ast.Raise) and not n.orelse:
            tests, want = disjuncts(n.test), ast.NotEq  # `if x.dim() != 3 or ...: raise`
        else:
            continue
        for t in tests:
            found = _rank_test(t, names, want)
            if found is not None:
                out[found[0]] = found[1]
    return out





def _rank_test(t: ast.expr, names: set[str], op: type[ast.cmpop]) -> tuple[str, int] | None:
    """`x.ndim == 4` (or `!=` for a refusal): (x, 4)."""
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], op)):
        return None
    left, right = t.left, t.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and isinstance(right.value, int) and not isinstance(right.value, bool)):
        return None
    name = _rank_of(left)
    if name is None or name not in names or not 0 < right.value <= 8:
        return None
    return name, right.value


def _rank_of(e: ast.expr) -> str | None:
    """`x.ndim`, `x.dim()`, `len(x.shape)`: x."""
    if isinstance(e, ast.Attribute) and e.attr == "ndim" and isinstance(e.value, ast.Name):
        return e.value.id
    if (
        isinstance(e, ast.Call)
        and not e.args
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "dim"
        and isinstance(e.func.value, ast.Name)
    ):
        return e.func.value.id
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "len"
        and len(e.args) == 1
        and isinstance(e.args[0], ast.Attribute)
        and e.args[0].attr == "shape"
        and isinstance(e.args[0].value, ast.Name)
    ):
        return e.args[0].value.id
    return None
