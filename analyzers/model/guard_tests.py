"""Shapes of launcher tests the host evaluator reads for what they fix: a value pinned at a literal
(`n == 4`), or a choice among literals (`x == 64 or x == 128`). Pure syntax, no evaluation, so the
evaluator (host.py) and anything else that reads guards can share them."""

from __future__ import annotations

import ast


def literal_choices(test: ast.expr) -> tuple[ast.expr, list[ast.expr]] | None:
    """`x == 64 or x == 128`: the one subject and its literal values; None for any other test."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return None
    subject, values = None, []
    for v in test.values:
        if not (isinstance(v, ast.Compare) and len(v.ops) == 1 and isinstance(v.ops[0], ast.Eq)):
            return None
        const = v.comparators[0]
        if not (isinstance(const, ast.Constant) and type(const.value) is int):
            return None
        if subject is not None and ast.dump(subject) != ast.dump(v.left):
            return None
        subject = v.left
        values.append(const)
    return (subject, values) if subject is not None else None


def size_fixed_by(test: ast.expr) -> bool:
    """`n == 4` / `4 == n`: a test fixing one value at a literal (the launch inside holds it)."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and sum(isinstance(x, ast.Constant) and type(x.value) is int for x in (test.left, test.comparators[0])) == 1
    )


def conjuncts(test: ast.expr) -> list[ast.expr]:
    """The parts of a test that holds: `a and b` holding makes each part hold."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [p for v in test.values for p in conjuncts(v)]
    return [test]


def disjuncts(test: ast.expr) -> list[ast.expr]:
    """The parts of a test that fails: `a or b` failing makes each part fail."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [p for v in test.values for p in disjuncts(v)]
    return [test]
