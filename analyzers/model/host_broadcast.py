"""torch's broadcast rule on host shapes (`torch.broadcast_tensors`, `torch.broadcast_shapes`):
the launcher of an elementwise kernel broadcasts its operands to one shape and hands the kernel
that shape's element count (flag-gems' `masked_select`, `isin`, `where`-like ops).

The rule, as torch documents it: shapes align at the right; at each position a size 1 stretches
to the others, and the sizes that are not 1 must be equal (else torch raises); a shape of lower
rank contributes nothing to the leading positions. A size the evaluator does not know stays
unknown in the result unless a known size other than 1 sits at the same position (torch
raises unless the unknown one is 1 or equal to it, so the result is that size either way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from argus.analyzers.model.host_values import Opaque, SymInt


def common_shape(shapes: list[list[Any]], same: Callable[[SymInt, SymInt], None]) -> list[Any] | None:
    """The broadcast shape of `shapes`, or None when the sizes given are ones torch rejects.

    `same(a, b)` is told of two sizes that are not 1 at one position: torch requires them
    equal (the recording pass puts their dimension classes together)."""
    if not shapes:
        return []
    rank = max(len(s) for s in shapes)
    out: list[Any] = []
    for pos in range(rank):
        column = [s[len(s) - rank + pos] for s in shapes if len(s) - rank + pos >= 0]
        stretched = [x for x in column if _is_int(x) and int(x) != 1]
        if stretched:
            first = stretched[0]
            for other in stretched[1:]:
                if int(other) != int(first):
                    return None
                if isinstance(first, SymInt) and isinstance(other, SymInt):
                    same(first, other)
            out.append(first)
        elif any(not _is_int(x) for x in column):
            out.append(Opaque("broadcast"))  # an unknown size against 1s: unknown
        else:
            out.append(column[0])  # all 1: the first one (its class kept)
    return out


def shape_arguments(args: list[Any]) -> list[list[Any]] | None:
    """`torch.broadcast_shapes(*shapes)`'s arguments as shapes: tuples, lists or single ints
    (a 1-d shape); None when one is something else (not modelled)."""
    shapes: list[list[Any]] = []
    for a in args:
        if isinstance(a, tuple | list):
            shapes.append(list(a))
        elif _is_int(a):
            shapes.append([a])
        else:
            return None
    return shapes


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)
