"""The launcher's asserts as the host evaluator meets them: an equality unifies dimension
classes (`assert k.shape == q.shape`), a `%` one records a multiple, `in` a set of allowed
sizes, and one the probe's sizes break (`assert M == hc * hc + 2 * hc`, `assert vocab_size <=
world * shard_width`) refuses the probe, which assert_search.py then moves to sizes the launcher
accepts. A mixin of HostEval, kept apart so host.py stays one job."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.model.guard_tests import literal_choices
from argus.analyzers.model.host_values import DimClasses, SymInt

#: the comparisons an ordering assert between sizes makes
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class HostAsserts:
    """Mixin of HostEval (which provides `expr`, `unify`, `recording`, `dims`, ...)."""

    recording: bool
    undecided_depth: int
    call_depth: int
    broken_asserts: list[Any]
    dims: DimClasses
    expr: Callable[[ast.expr], Any]  # HostEval's
    unify: Callable[[Any, Any], None]
    note_rank_test: Callable[[ast.expr, bool], None]

    def record_assert(self, test: ast.expr) -> None:
        if self.undecided_depth:
            return  # an assert on a side of an undecided `if` may never run
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for v in test.values:
                self.record_assert(v)
            return
        choices = literal_choices(test)
        if choices is not None:  # `H == 64 or H == 128` is `H in (64, 128)`
            subject, values = choices
            test = ast.copy_location(
                ast.Compare(left=subject, ops=[ast.In()], comparators=[ast.Tuple(elts=values, ctx=ast.Load())]), test
            )
        if isinstance(test, ast.Compare) and len(test.ops) > 1:
            # `k.shape == v.shape == (b, h, s, d)`: each neighbouring pair
            operands = [test.left, *test.comparators]
            for op_, a_, b_ in zip(test.ops, operands, operands[1:], strict=False):
                self.record_assert(ast.Compare(left=a_, ops=[op_], comparators=[b_]))
            return
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return
        left, right, op = self.expr(test.left), self.expr(test.comparators[0]), test.ops[0]
        if isinstance(op, ast.Eq):
            self.unify(left, right)
            if not self.recording and _sizes_differ(left, right):
                self.broken_asserts.append(test)
            if isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod):
                a, b = self.expr(test.left.left), self.expr(test.left.right)
                if isinstance(a, SymInt) and isinstance(b, SymInt) and right == 0:
                    self.dims.divisible_by[a.sym] = b.sym
                elif isinstance(a, SymInt) and isinstance(b, int) and right == 0:
                    root = self.dims.find(a.sym)
                    self.dims.multiple_of[root] = max(self.dims.multiple_of.get(root, 1), int(b))
        elif isinstance(op, ORDERINGS):
            if not self.recording and _order_broken(left, right, op):
                # `assert vocab_size <= world * shard_width` (sglang's gathered softcap): a
                # probe whose sizes break it is a launch the launcher refuses (assert_search.py)
                self.broken_asserts.append(test)
        elif isinstance(op, ast.In) and isinstance(left, SymInt) and isinstance(right, tuple | list):
            vals = [int(x) for x in right if isinstance(x, int)]
            if vals:
                self.dims.allowed[self.dims.find(left.sym)] = vals


_ORDER: dict[type, Any] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def _order_broken(a: Any, b: Any, op: ast.cmpop) -> bool:
    """Whether an ordering the launcher asserts between sizes fails at the probe's sizes (at
    least one side a size the probe chose; plain numbers on both sides decide nothing here)."""
    sizes = [x for x in (a, b) if isinstance(x, int) and not isinstance(x, bool)]
    if len(sizes) != 2 or not any(isinstance(x, SymInt) for x in sizes):
        return False
    return not _ORDER[type(op)](int(a), int(b))


def _sizes_differ(a: Any, b: Any) -> bool:
    """Whether two sizes or shapes the launcher asserts equal are unequal at the probe's sizes:
    the probe is then a launch the launcher itself would refuse (its assert raises), e.g. a
    `view(-1, n)` that computed a size from a total the probe chose freely, or a size the
    assert derives from others (`M == hc * hc + 2 * hc`) chosen on its own."""
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return any(_sizes_differ(x, y) for x, y in zip(a, b, strict=False))
    sizes = [x for x in (a, b) if isinstance(x, int) and not isinstance(x, bool)]
    return len(sizes) == 2 and any(isinstance(x, SymInt) for x in sizes) and int(a) != int(b)
