"""A helper's refusal under a test the evaluator cannot decide: `if D > BD: raise`, with `BD`
from the device.

fla's Ascend launchers size a feature tile from the on-chip buffer (`BD = compute_ub_block_size(
...)`, which reads the NPU's capacity) and refuse a row that does not fit: `if D > BD: raise
RuntimeError(...)`. The evaluator cannot decide the test, and a `raise` under an undecided test
made the helper's value "no value" (host_invoke.NoValue: maybe no launch at all), so the kernel
was an AR001. But the launches that do happen are exactly those where the test is false, and
that is a fact about the unknown: `BD >= D`. So the raise side is dropped, the unknown keeps
its name and carries the lower bound (AtLeast), and a tile size picked for it
(helper_picks.py) is the smallest power of two that meets the bound when the usual pick does
not: the probe never launches a tile the launcher would have refused.

Only a refusal whose body is a bare `raise` (nothing assigned on the way) and whose test
compares a name holding an unknown with a number the evaluator knows (`D > BD`, `BD < D`,
`D >= BD`, `BD <= D`) is read so; any other undecided `raise` keeps the helper's value
unknown, as before.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.host_values import Opaque


class AtLeast(Opaque):
    """An unknown value the code establishes to be at least `low` (a refusal it passed)."""

    def __init__(self, what: str, low: int) -> None:
        super().__init__(what)
        self.low = low

    def __repr__(self) -> str:
        return f"<opaque {self.what} >= {self.low}>"


def renamed(v: Opaque, what: str) -> Opaque:
    """`v` named after `what` (a helper's result is named after the helper), its bound kept."""
    return AtLeast(what, v.low) if isinstance(v, AtLeast) else Opaque(what)


def refused_bound(test: ast.expr, body: list[ast.stmt], value: Any) -> tuple[str, int] | None:
    """(name, low) when `if test: <body>` refuses every launch where the unknown `name` is
    below `low` (see the module's docstring); None for any other `if`. `value(e)` evaluates
    an expression in the current scope."""
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    # normalise to `known OP unknown`: `BD < D` is `D > BD`
    flipped = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
    if isinstance(left, ast.Name) and _unknown(value(left)):
        left, right, op = right, left, flipped.get(type(op), type(op))()
    if not (isinstance(right, ast.Name) and _unknown(value(right))):
        return None
    known = value(left)
    if not isinstance(known, int) or isinstance(known, bool):
        return None
    if isinstance(op, ast.Gt):  # `D > BD: raise`: BD >= D
        low = int(known)
    elif isinstance(op, ast.GtE):  # `D >= BD: raise`: BD > D
        low = int(known) + 1
    else:
        return None
    held = value(right)
    if isinstance(held, AtLeast):
        low = max(low, held.low)
    return right.id, low


def _unknown(v: Any) -> bool:
    """A plain unknown (or one already bounded): not a helper's no-value, not a truth."""
    return type(v) in (Opaque, AtLeast)


def least_tile(v: Any, pick: int) -> int:
    """The tile a probe picks for the unknown `v`: `pick`, or the smallest power of two at
    least `v`'s bound where `pick` is below it."""
    if not isinstance(v, AtLeast) or pick >= v.low:
        return pick
    return 1 << max(v.low - 1, 0).bit_length()
