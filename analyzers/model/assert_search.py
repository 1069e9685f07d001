"""A probe size the launcher's own equality asserts accept, found by trying nearby sizes.

`HC = int((math.isqrt(4 + 4 * M) - 2) // 2); assert HC * HC + 2 * HC == M` holds only for some
M (3, 8, 15, ...), and no relation between dimension classes says which: HC is computed from
M, not a size of its own. A probe whose M the assert refuses is no launch the code can make,
so the kernel would be checked as if it had no launch site. The launcher itself says which
sizes it takes: the host evaluation is rerun with each size of the assert's classes moved a
few steps up from the probe's choice, and the first that every assert accepts is the probe.
Nothing is assumed: the probe found is one the launcher runs through; where none is found
within the window, the refusal stands (the AR001 note names the assert).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.errors import HOST_ERRORS
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import SymInt

# sizes tried past the probe's choice for one class; the host evaluation runs once per try
WINDOW = 48
JOINT = 8  # steps every class of a refusal over several is moved up together


def assert_roots(ev: HostEval, test: ast.AST, sizes: dict[str, int]) -> list[str]:
    """The dimension classes (with a chosen size) whose sizes the refused assert reads; of a
    refusal (`if H < 2 or W < 2: raise`), those its comparisons read."""
    roots: list[str] = []
    for node in _operands(test):
        for n in ast.walk(node):
            if not isinstance(n, ast.expr):
                continue
            try:
                v = ev.expr(n)
            except (*HOST_ERRORS, RecursionError):  # a read the final environment cannot redo
                continue
            if isinstance(v, SymInt):
                r = ev.dims.find(v.sym)
                if r in sizes and r not in roots and not r.startswith("("):
                    roots.append(r)
    return roots


def _operands(test: ast.AST) -> list[ast.expr]:
    """The operands of the comparisons a refused test makes: an assert's own, or each one
    in an `if ...: raise` test's `or`/`and`."""
    if isinstance(test, ast.If):
        if not (test.body and isinstance(test.body[-1], ast.Raise)):
            return []  # a guard the launch sits under: a choice of path, not a refusal
        test = test.test
    if isinstance(test, ast.BoolOp):
        return [x for v in test.values for x in _operands(v)]
    if isinstance(test, ast.Compare):
        return [test.left, *test.comparators]
    return []


def accepted_sizes(
    sizes: dict[str, int], ev: HostEval, run: Callable[[dict[str, int]], HostEval]
) -> tuple[dict[str, Any], HostEval]:
    """Sizes at which no equality assert of the launcher fails: one class of the first refused
    assert moved up by 1..WINDOW (of a refusal that raises, 1..JOINT), or (a refusal over several: `if H < 2 or W < 2: raise` at
    the size-1 probe) all of them up together by 1..JOINT; the probe as it was where no such
    size is found."""
    test = ev.broken_asserts[0]
    roots = assert_roots(ev, test, sizes)
    window = JOINT if isinstance(test, ast.If) else WINDOW  # (a refusal's bound is near, if anywhere)
    for root in roots:
        start = sizes[root]
        for v in [*_solved(ev, test, root), *range(start + 1, start + 1 + window)]:
            tried = {**sizes, root: v}
            ev2 = run(tried)
            if not ev2.broken_asserts:
                return tried, ev2
    if len(roots) > 1:
        for step in range(1, JOINT + 1):
            tried = {**sizes, **{r: sizes[r] + step for r in roots}}
            ev2 = run(tried)
            if not ev2.broken_asserts:
                return tried, ev2
    return sizes, ev


def _solved(ev: HostEval, test: ast.expr, root: str) -> list[int]:
    """`assert a.shape[1] == b.shape[0] * 4`: where one side is a size of the class `root`
    itself, the other side's value is the size that class must take (first try)."""
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return []
    sides = [test.left, test.comparators[0]]
    out: list[int] = []
    for mine, other in (sides, sides[::-1]):
        try:
            a, b = ev.expr(mine), ev.expr(other)
        except (*HOST_ERRORS, RecursionError):  # a read the final environment cannot redo
            continue
        if isinstance(a, SymInt) and ev.dims.find(a.sym) == root and isinstance(b, int) and not isinstance(b, bool):
            if 0 < int(b) <= 1 << 20:
                out.append(int(b))
    return out
