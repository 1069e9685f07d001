"""Picked constexprs that the kernel tests against a value: the second probe takes that value.

flag-gems' mm kernels end with `if SPLIT_K == 1: tl.store(C, acc) else: tl.atomic_add(C, acc)`,
and `SPLIT_K` comes from autotune configs the checker cannot read (`runtime.get_tuned_config`).
The probes picked 4, then 2 (binder_picks.py): both take the `else` branch, so GR004 ("`C`
accumulates with atomics in an autotuned kernel") was seen by both probes and stood as a warning,
though with `SPLIT_K == 1`, a value the tuner may as well pick, no atomic runs at all.

A test `P == C` (or `P != C`) on a picked count names a value on the other side of the branch, so
the second probe takes it: each branch is then seen by one probe, and what only one branch does
rests on the pick, at most a hint that names it (the two-probe rule of binder_picks.py).
"""

from __future__ import annotations

import ast

from argus.analyzers.model.nodes import subtree


def branch_values(func: ast.FunctionDef) -> dict[str, int]:
    """Name -> the first int literal the kernel compares it with by `==` or `!=` in a branch
    test (`if SPLIT_K == 1:`, `x if NUM != 1 else y`, parts of an `and`/`or`)."""
    out: dict[str, int] = {}
    for n in subtree(func):
        if isinstance(n, ast.If | ast.IfExp | ast.While):
            for part in _parts(n.test):
                found = _compared(part)
                if found is not None and found[0] not in out:
                    out[found[0]] = found[1]
    return out


def second_pick(name: str, first: int, halved: int, tested: dict[str, int]) -> int:
    """The second probe's value of a picked count: the value a test names, when it differs from
    the first probe's (the other side of that branch); else the halved pick."""
    value = tested.get(name)
    return value if value is not None and value != first and value > 0 else halved


def _parts(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp):
        return [p for v in test.values for p in _parts(v)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _parts(test.operand)
    return [test]


def _compared(test: ast.expr) -> tuple[str, int] | None:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq | ast.NotEq):
        return None
    for name, lit in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if isinstance(name, ast.Name) and isinstance(lit, ast.Constant) and type(lit.value) is int:
            return name.id, lit.value
    return None
