"""Garbage a reduction or scan takes in: undefined lanes (MB004) and padding that is not the
reduction's neutral element (DF003). Each is judged here and held on the output lanes it spoils
(garbage.py), so that a finding stands only where such a lane is kept; ops_reduce.py computes the
reduced values and tags.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp import garbage
from argus.analyzers.interp.ops_core import bc, to_val
from argus.analyzers.interp.values import Val
from argus.analyzers.model.host_values import dotted_name

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

# the value a reduction's padding must hold to change nothing (DF003 compares padding with it)
IDENTITY = {
    "sum": 0.0,
    "xor_sum": 0,
    "cumsum": 0.0,
    "max": -np.inf,
    "argmax": -np.inf,
    "min": np.inf,
    "argmin": np.inf,
    "cumprod": 1.0,
    "prod": 1.0,
    "all": 1,  # a combine function `a and b` / `a & b` over booleans (flag-gems' reduce_all)
    "any": 0,
}
SCANS = ("cumsum", "cumprod")


def is_reversed(kwargs: dict[str, Any], node: ast.AST) -> bool:
    return bool(kwargs.get("reverse") and to_val(kwargs["reverse"], node).item())


def neutral_beside_garbage(x: Val, name: str, axis: int | None) -> Val:
    """A max (min) over a slice whose lanes are undefined or the -inf (+inf) a `tl.where`
    filled in: no real value is in the slice, so its result is garbage like an undefined
    slice's, not garbage mixed with data (flag-gems' flash_mla: the head rows past H, loaded
    without `other=`, meet the -inf of the masked-off keys; those rows are stored masked).
    Such neutral lanes are marked undefined; a slice holding any real value is left as it is."""
    if name not in ("max", "min") or x.undef is None or axis is None or x.data.ndim == 0:
        return x
    und = bc(x.undef, x.shape)
    fill = -np.inf if name == "max" else np.inf
    neutral = ~und & (x.data == fill)
    if not neutral.any() or not und.any():
        return x
    only = (und | neutral).all(axis=axis, keepdims=True) & und.any(axis=axis, keepdims=True)
    return x.with_(undef=und | (neutral & only))


def undefined_lanes_held(
    interp: OpContext,
    x: Val,
    name: str,
    axis: int | None,
    keep: bool,
    kwargs: dict[str, Any],
    node: ast.AST,
) -> garbage.Held | None:
    """MB004: masked-off garbage reduced together with defined lanes (a slice undefined
    throughout reduces to garbage nothing defined depends on), held on the output lanes it
    spoils until one of them is kept (garbage.py). Once per load that made it."""
    if x.undef is None or not x.undef.any():
        return None
    und = bc(x.undef, x.shape)
    if name in SCANS:
        # a scan carries garbage forward only: a defined lane after an undefined one
        ax = axis if axis is not None else 0
        rev = is_reversed(kwargs, node)
        u = np.flip(und, ax) if rev else und
        mixed = np.logical_or.accumulate(u, axis=ax) & ~u
        mixed = np.flip(mixed, ax) if rev else mixed
    elif axis is None:
        mixed = np.asarray(und.any() and not und.all())
    else:
        mixed = und.any(axis=axis, keepdims=keep) & ~und.all(axis=axis, keepdims=keep)
    if not mixed.any():
        return None
    lane = np.argwhere(und)[0].tolist()
    key = ("undef", id(x.undef_site[0]) if x.undef_site else None)
    return garbage.pend(
        interp, "undef-reduced", node, mixed, False, key, op=name, lane=lane, consumer="reduction", load=x.undef_site
    )


def padding_held(
    interp: OpContext, x: Val, name: str, axis: int | None, keep: bool, node: ast.AST, reverse: bool = False
) -> garbage.Held | None:
    """DF003: outside-extent lanes that are not neutral for the reduction (an argmax/argmin
    picks an index, which padding cannot shift the way it shifts a value), held on the output
    lanes they change until one of them is kept (garbage.py). A scan carries a lane forward
    only: padding after every real lane of its slice (the tail of a masked load) changes no
    real prefix, so only padding before a real lane counts."""
    if x.pad is None or not x.pad.any() or name in ("argmax", "argmin"):
        return None
    identity = identity_of(name, x.dtype)
    bad = _padding_that_counts(x, name, axis, identity)
    if bad.any() and name == "max" and never_negative(reduced_operand(node)):
        # `tl.max(tl.abs(x))`: no real lane is below 0, so padding at or below 0 never wins
        # (a tie leaves the max as it is), whatever values the probe's data holds
        with np.errstate(all="ignore"):
            bad &= x.data > 0
    if not bad.any():
        return None
    if name in SCANS:
        ax = axis if axis is not None else 0
        real = ~bc(x.pad, x.shape)
        seen = np.flip(bad, ax) if reverse else bad
        spoiled = np.logical_or.accumulate(seen, axis=ax) & (np.flip(real, ax) if reverse else real)
        spoiled = np.flip(spoiled, ax) if reverse else spoiled
    elif axis is None:
        spoiled = np.asarray(True)
    else:
        spoiled = bad.any(axis=axis, keepdims=keep)
    lane = np.argwhere(bad)[0].tolist()
    data = x.data
    value = float(data[tuple(lane)]) if data.ndim else float(data)
    # padding holding the other infinity (`-inf / t` of a negative probe `t`) was flipped by
    # the sign of loaded data: a hint naming that data (its sign is the caller's contract)
    flipped = x.pad_sign_from if name in ("max", "min") and value == -identity else None
    return garbage.pend(
        interp,
        "pad-reduced",
        node,
        spoiled,
        True,
        op=name,
        lane=lane,
        value=value,
        identity=identity,
        sign_from=flipped,
    )


_NEVER_NEGATIVE = frozenset({"abs", "exp", "exp2", "sqrt", "sqrt_rn", "sigmoid"})


def reduced_operand(node: ast.AST) -> ast.expr | None:
    """The tile `tl.max(x, ...)` or `x.max(...)` reduces, as written."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    owner = node.func.value
    if isinstance(owner, ast.Name | ast.Attribute) and dotted_name(owner) in ("tl", "triton.language", "tl.math"):
        return node.args[0] if node.args else None
    return owner


def never_negative(e: ast.expr | None) -> bool:
    """Whether the expression's value is never below 0 by its form: `tl.abs(x)`, `tl.exp(x)`,
    `tl.sqrt(x)`, `x * x`, `tl.maximum(x, 0)`, any of them cast (`.to(...)`)."""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "to":
        e = e.func.value
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return ast.dump(e.left) == ast.dump(e.right)
    if not isinstance(e, ast.Call):
        return False
    callee = e.func.attr if isinstance(e.func, ast.Attribute) else e.func.id if isinstance(e.func, ast.Name) else ""
    if callee in _NEVER_NEGATIVE:
        return True
    return callee == "maximum" and any(isinstance(a, ast.Constant) and a.value == 0 for a in e.args)


def identity_of(name: str, dtype: str) -> float:
    """The neutral element of a reduction over `dtype`: over booleans (`tl.max(v != 0)`, an
    "any") a max starts from False and a min from True; over unsigned integers a max from 0."""
    if dtype == "int1" and name in ("max", "min"):
        return 0 if name == "max" else 1
    if dtype.startswith("uint") and name == "max":
        return 0
    return IDENTITY[name]


def _padding_that_counts(x: Val, name: str, axis: int | None, identity: float) -> np.ndarray:
    """The padded lanes whose value is not `identity` and can change the result."""
    data = x.data
    padm = bc(x.pad, x.shape)
    with np.errstate(all="ignore"):
        bad = padm & (data != identity) & ~np.isnan(data)
        if x.undef is not None:
            bad &= ~bc(x.undef, x.shape)
        if axis is not None and bad.any():
            # only where padding meets real elements: a slice that is padding throughout
            # (a block of keys wholly past the end) reduces to a value nothing real reads
            bad &= (~padm).any(axis=axis, keepdims=True)
        if bad.any() and name in ("max", "min"):
            # a max over |x| with zero padding: padding that never wins changes nothing
            fn_ = np.max if name == "max" else np.min
            real_only = fn_(np.where(padm, identity, data), axis=axis)
            if np.array_equal(real_only, fn_(data, axis=axis), equal_nan=True):
                bad = np.zeros_like(bad)
            else:
                bad = _unless_padding_below_every_value(x, data, padm, bad, name, axis)
    return bad


def _unless_padding_below_every_value(
    x: Val, data: np.ndarray, padm: np.ndarray, bad: np.ndarray, name: str, axis: int | None
) -> np.ndarray:
    """A max over |x| with zero padding in a tile that also holds rows past the end (padding
    throughout, whose max nothing real reads): where every real lane of a slice lies strictly
    past every padded one, the padding is a bound of the values (0 for |x|) and never wins. A
    real lane equal to the pad value keeps the finding: that is what a running max started at
    0 instead of -inf leaves in a row of negative values."""
    sign = 1.0 if name == "max" else -1.0
    d = sign * data
    real = ~padm if x.undef is None else ~padm & ~bc(x.undef, x.shape)
    real_low = np.min(np.where(real, d, np.inf), axis=axis, keepdims=True)
    pad_high = np.max(np.where(bad, d, -np.inf), axis=axis, keepdims=True)
    counts = bad.any(axis=axis, keepdims=True)
    if np.all((real_low > pad_high) | ~counts):
        return np.zeros_like(bad)
    return bad
