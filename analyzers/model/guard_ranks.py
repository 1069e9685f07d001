"""Ranks the tests on the launch's path state: `if input.dim() == 1: kernel[...]`,
`if len(A.shape) == 2:`, `ndim = x.ndim ... if ndim == 2:`, `if x.dim() < 3: raise`.

A launcher whose text reads a tensor at several ranks (flag-gems' `diag` unpacks `M, N =
input.shape` on the branch for matrices and launches its vector kernel under `if input.dim() ==
1:`) or only from the back (`x.shape[-1]` after `if x.dim() < 3: raise`) leaves the probe to
choose a rank, and a choice the test on the launch's path refuses made the probe no launch at
all (an AR001 naming the test). The test itself says which ranks reach the launch: `== K` on
the branch holding it (or an assert, or a refusal's negation) fixes the rank at K, a fact of the
code; `< K: raise` (or `assert x.dim() >= K`) only bounds it below, so the probe takes K and
leaves the tensor's extent unjudged (the rank is a guess, as for `q.shape[2]` alone).

Only a tensor that is still a launcher input as it was bound (its symbols those of the
parameter, in order: `x.contiguous()` is, `x.reshape(...)` is not) is ranked, so a test of a
reshaped copy never re-ranks the parameter.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.model.guard_tests import conjuncts, disjuncts
from argus.analyzers.model.host_values import HostTensor
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import subtree

MAX_RANK = 8


def rank_wants(
    test: ast.expr, holds: bool, value_of: Callable[[ast.expr], Any], aliases: dict[str, ast.expr]
) -> list[tuple[str, int, bool | None, str]]:
    """(tensor parameter, rank, exact, partner) for each rank test in `test`, given that the test
    `holds` (the launch's side of an `if`, an assert) or fails (the `else` side, a refusal
    that raises). Exact (True): `== K`; False: a lower bound (`>= K`, `> K - 1`); None: the
    rank at which an equality of shapes holds (`_shape_matches`)."""
    out: list[tuple[str, int, bool | None, str]] = []
    parts = conjuncts(test) if holds else ([test] if isinstance(test, ast.Compare) else disjuncts(test))
    for part in parts:
        if holds:
            out += _shape_matches(part, value_of)
        elif isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.NotEq):
            out += _shape_matches(ast.Compare(left=part.left, ops=[ast.Eq()], comparators=part.comparators), value_of)
        found = _rank_compare(part, aliases)
        if found is None:
            continue
        subject, op, k = found
        want = _wanted(op if holds else _NEGATED.get(type(op)), k)
        name = _input_name(value_of(subject))
        if want is not None and name is not None and (want[0] > 0 or want == (0, True)) and want[0] <= MAX_RANK:
            out.append((name, *want, ""))
    return out


def _shape_matches(part: ast.expr, value_of: Callable[[ast.expr], Any]) -> list[tuple[str, int, bool | None, str]]:
    """`q.shape[:-2] == k.shape[:-2]` (or `tuple(out.shape) == expected`) holding, its sides of
    different lengths at the ranks chosen: (tensor, the rank at which its side has the other
    side's length, None, the other side's tensor or "") for a side read off an input tensor.
    None: the rank that lets the assert hold, taken where the tensor's rank is a guess or the
    other side's is fixed (apply_rank_wants)."""
    if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.Eq)):
        return []
    sides = [part.left, part.comparators[0]]
    values = [value_of(x) for x in sides]
    if not all(isinstance(v, tuple | list) for v in values) or len(values[0]) == len(values[1]):
        return []
    out: list[tuple[str, int, bool | None, str]] = []
    reads = [_shape_read(x) for x in sides]
    names = [None if r is None else _input_name(value_of(r[0])) for r in reads]
    for i, (read, name) in enumerate(zip(reads, names, strict=True)):
        if read is None or name is None:
            continue
        other = values[1 - i]
        rank = next((r for r in range(1, MAX_RANK + 1) if len(range(r)[read[1]]) == len(other)), None)
        if rank is not None:
            out.append((name, rank, None, names[1 - i] or ""))
    return out


def _shape_read(e: ast.expr) -> tuple[ast.expr, slice] | None:
    """`X.shape`, `X.shape[a:b]` (constant bounds), `tuple(X.shape)`, `X.size()`: (X, the slice)."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("tuple", "list") and len(e.args) == 1:
        e = e.args[0]
    cut = slice(None)
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) and e.slice.step is None:
        bounds = [e.slice.lower, e.slice.upper]
        ints = [None if b is None else _signed_int(b) for b in bounds]
        if any(b is not None and i is None for b, i in zip(bounds, ints, strict=True)):
            return None
        cut, e = slice(ints[0], ints[1]), e.value
    if isinstance(e, ast.Attribute) and e.attr == "shape":
        return e.value, cut
    if isinstance(e, ast.Call) and not e.args and isinstance(e.func, ast.Attribute) and e.func.attr == "size":
        return e.func.value, cut
    return None


def _signed_int(e: ast.expr) -> int | None:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _int_literal(e.operand)
        return None if inner is None else -inner
    return _int_literal(e)


def rank_aliases(func: ast.FunctionDef | None) -> dict[str, ast.expr]:
    """Names the launcher assigns a rank once (`ndim = x.dim()`, `rank = len(x.shape)`): a
    test of the name is a test of that rank."""
    if func is None:
        return {}
    # (kept on the launcher: every kernel it launches is bound with it, in every check)
    return on_node(func, "rank_aliases", lambda: _rank_aliases(func))


def _rank_aliases(func: ast.FunctionDef) -> dict[str, ast.expr]:
    stores: dict[str, int] = {}
    ranks: dict[str, ast.expr] = {}
    for n in subtree(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            subject = _rank_subject(n.value)
            if subject is not None:
                ranks[n.targets[0].id] = n.value
    return {k: v for k, v in ranks.items() if stores.get(k) == 1}


_NEGATED: dict[type, ast.cmpop] = {
    ast.NotEq: ast.Eq(),
    ast.Lt: ast.GtE(),
    ast.LtE: ast.Gt(),
    ast.Eq: ast.NotEq(),
}


def _wanted(op: ast.cmpop | None, k: int) -> tuple[int, bool] | None:
    """`rank op k` holding: the rank it fixes, or the least it allows."""
    if isinstance(op, ast.Eq):
        return k, True
    if isinstance(op, ast.GtE):
        return k, False
    if isinstance(op, ast.Gt):
        return k + 1, False
    return None


def _rank_compare(part: ast.expr, aliases: dict[str, ast.expr]) -> tuple[ast.expr, ast.cmpop, int] | None:
    """`R op K` (or `K op R`, turned round) of a rank expression R: (R's tensor, op, K)."""
    if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
        return None
    left, op, right = part.left, part.ops[0], part.comparators[0]
    if _int_literal(left) is not None:
        left, right = right, left
        op = _FLIPPED.get(type(op), op)
    k = _int_literal(right)
    if k is None:
        return None
    if isinstance(left, ast.Name) and left.id in aliases:
        left = aliases[left.id]
    subject = _rank_subject(left)
    return None if subject is None else (subject, op, k)


_FLIPPED: dict[type, ast.cmpop] = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}


def _rank_subject(e: ast.expr) -> ast.expr | None:
    """X of `X.dim()`, `X.ndim`, `len(X.shape)`, `len(X.size())`."""
    if isinstance(e, ast.Attribute) and e.attr == "ndim":
        return e.value
    if isinstance(e, ast.Call) and not e.args and isinstance(e.func, ast.Attribute) and e.func.attr == "dim":
        return e.func.value
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len" and len(e.args) == 1:
        inner = e.args[0]
        if isinstance(inner, ast.Attribute) and inner.attr == "shape":
            return inner.value
        if isinstance(inner, ast.Call) and not inner.args and isinstance(inner.func, ast.Attribute):
            return inner.func.value if inner.func.attr == "size" else None
    return None


def _input_name(v: Any) -> str | None:
    """The parameter a host tensor is, where it is that parameter as bound (symbols
    `name.0`, `name.1`, ... in order)."""
    if not isinstance(v, HostTensor) or not v.name:
        return None
    if v.symbols != [f"{v.name}.{i}" for i in range(len(v.symbols))]:
        return None
    return v.name


def _int_literal(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    return None





def apply_rank_wants(
    wants: dict[str, tuple[int, bool | None, str]], ranks: dict[str, int], unknown: set[str]
) -> bool:
    """Re-ranks the launcher's tensors as the tests on the launch's path want (`ranks`, and
    `unknown`: the tensors whose rank is a guess); True when a rank changed. A fixed rank is a
    fact (the tensor's rank is known); a lower bound above the rank chosen is the least the
    launcher accepts, and the rank an equality of shapes needs replaces a guessed one: both
    stay guesses."""
    changed = False
    for name, (rank, exact, partner) in wants.items():
        fixed_partner = partner in wants and wants[partner][1] is True
        current = ranks.get(name)
        if current is None or current == rank:
            continue  # not a tensor the launcher's text ranks, or ranked as wanted
        if exact:
            unknown.discard(name)
        elif (exact is False and current < rank) or (exact is None and (name in unknown or fixed_partner)):
            unknown.add(name)
        else:
            continue
        ranks[name] = rank
        changed = True
    return changed
