"""Elementwise math: `tl.exp`, `tl.sqrt`, ... (one table of numpy functions), `tl.where`,
`tl.maximum` / `tl.minimum`, `tl.fma`, `tl.clamp` and the integer helpers.
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp import softmax as sm
from argus.analyzers.interp.opdecl import declare, named
from argus.analyzers.interp.ops_arith import binop
from argus.analyzers.interp.ops_core import (
    bc,
    bshape,
    derive,
    dtype_arg,
    light_float,
    np_dtype,
    or_masks,
    promote,
    to_val,
    unstable_normalizer,
)
from argus.analyzers.interp.values import (
    FullRun,
    Ptr,
    Val,
    is_float,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

UNARY_FLOAT = {
    "sqrt": np.sqrt,
    "sqrt_rn": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "log": np.log,
    "log2": np.log2,
    "log1p": np.log1p,
    "cos": np.cos,
    "sin": np.sin,
    "tan": np.tan,
    "tanh": np.tanh,
    "abs": np.abs,
    "fabs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "erf": None,
    "fast_erf": None,  # Cambricon libdevice's erf (an approximation: the value is erf's)
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "fast_expf": np.exp,
    "fast_exp2f": np.exp2,
    "fast_logf": np.log,
    "fast_log2f": np.log2,
    "fast_log10f": np.log10,
    "fast_cosf": np.cos,
    "fast_sinf": np.sin,
    "fast_tanf": np.tan,
    "log10": np.log10,
    "rint": np.rint,
    "round": np.round,
    "trunc": np.trunc,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "neg": np.negative,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "signbit": np.signbit,
    "isfinited": np.isfinite,  # libdevice's names for fp64 and fp32
    "finitef": np.isfinite,
    "fast_tanh": np.tanh,
    "fast_tanhf": np.tanh,
}
_PREDICATES = ("isnan", "isinf", "signbit", "isfinited", "finitef")


def unary_float(interp: OpContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = to_val(args[0], node)
    if name == "abs" and not is_float(x.dtype):
        # `tl.abs` of an integer is an integer (`t = tl.abs(offs - pad)`: a reflected index)
        return derive([x], np.abs(x.data.astype(np.int64)), x.dtype)
    dtype = x.dtype if is_float(x.dtype) else "fp32"
    if name in _PREDICATES:
        dtype = "int1"
    if interp.address_only:
        if dtype == "int1":
            raise FullRun()
        return light_float(x.shape, dtype)
    with np.errstate(all="ignore"):
        if name in ("erf", "fast_erf"):
            data = (
                np.vectorize(math.erf, otypes=[np.float64])(x.data.astype(np.float64))
                if x.data.size
                else x.data.astype(np.float64)
            )
        else:
            data = UNARY_FLOAT[name](x.data.astype(np.float64))
    out = derive([x], np.asarray(data, dtype=np_dtype(dtype)), dtype)
    if name in ("exp", "exp2", "fast_expf", "fast_exp2f"):
        _exp_semantics(interp, x, out, node)
    elif name in ("log", "log2", "fast_logf", "fast_log2f"):
        unstable_normalizer(interp, x)
    return out


def _exp_semantics(interp: OpContext, x: Val, out: Val, node: ast.AST) -> None:
    shift = x.shift
    if isinstance(shift, tuple) and shift and shift[0] == "rescale":
        out.scale = sm.Rescale(shift[1], shift[2])
        out.lineage = frozenset()
        return
    if isinstance(shift, sm.MaxToken):
        if (shift.empty and x.lineage) or not x.lineage <= shift.covers:  # (a sink's logit has none)
            interp.fact("stale-max", node)
            out.scale = sm.ANY
        else:
            out.scale = shift
        out.terms = x.lineage
        return
    if x.lineage and x.maxinfo is None and x.data.ndim > 0:  # a 0-d exp (a gate) is no score row
        out.unstable_exp = (node, interp.smap)


def _where(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    if any(isinstance(a, Ptr) for a in args[1:3]):
        return _pointer_choice(args[0], args[1], args[2], node)
    c, x, y = (to_val(a, node) for a in args[:3])
    shape = bshape(c.shape, x.shape, y.shape)
    dtype = promote(x, y)
    if interp.address_only:
        if is_float(c.dtype):
            raise FullRun()
        if is_float(dtype):
            return light_float(shape, dtype)
    cond = bc(c.data.astype(bool), shape)
    data = np.where(cond, bc(x.data, shape), bc(y.data, shape)).astype(np_dtype(dtype))
    # derive's merged tags and padding are replaced below, lane by lane: not made (its other
    # fields read neither; with no padding on either side its padding is None anyway)
    out = derive([x.with_(tags={}, pad=None), y.with_(tags={}, pad=None)], data, dtype)
    # lanes take their flags and tags from the side they come from
    for attr in ("undef", "pad"):
        xa, ya = getattr(x, attr), getattr(y, attr)
        if xa is None and ya is None:
            continue
        xa = bc(xa, shape) if xa is not None else np.zeros(shape, bool)
        ya = bc(ya, shape) if ya is not None else np.zeros(shape, bool)
        if attr == "pad" and c.loaded_from:
            # a test on loaded integers (`cur <= hi[:, None]`, a row's key window) picks the
            # lanes: whether one past the data gets through rests on the contents' range, the
            # caller's contract, which the probe's synthesized values do not honour; only a
            # lane outside the data on both sides stays so
            setattr(out, attr, xa & ya)
            continue
        setattr(out, attr, np.where(cond, xa, ya))
    tags = {}
    # x's tags then y's others, in their own order (a set union's order changed with
    # PYTHONHASHSEED, and the order of tags decided which one DF003 counted: contraction_key.py)
    for k in [*x.tags, *(k for k in y.tags if k not in x.tags)]:
        if k in x.tags and k in y.tags:
            tags[k] = np.where(cond, bc(x.tags[k], shape), bc(y.tags[k], shape))
        else:
            tags[k] = bc((x.tags if k in x.tags else y.tags)[k], shape)
    out.tags = tags
    out.undef = out.undef if c.undef is None else or_masks(out.undef, c.undef, shape)
    out.held = garbage.select(cond, x, y, shape) if x.held or y.held else ()
    if c.held:
        out.held = garbage.elementwise([out, c], shape)  # a spoiled condition spoils the choice
    const_x, const_y = not x.lineage and x.maxinfo is None, not y.lineage and y.maxinfo is None
    if x.maxinfo is not None and const_y:
        out.maxinfo = x.maxinfo
    elif y.maxinfo is not None and const_x:
        out.maxinfo = y.maxinfo
    out.shift = (
        x.shift if x.shift is not None and const_y else (y.shift if y.shift is not None and const_x else None)
    )
    out.scale = x.scale if x.scale is not None else y.scale
    if x.kcover is not None or y.kcover is not None:
        out.kcover = x.kcover if x.kcover is not None else y.kcover
    out.loaded_from = x.loaded_from | y.loaded_from
    if c.checked and out.loaded_from:
        out.loaded_from = out.loaded_from - c.checked
    return out


def minmax(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST, is_max: bool) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    dtype = promote(a, b)
    if interp.address_only and is_float(dtype):
        return light_float(bshape(a.shape, b.shape), dtype)
    with np.errstate(all="ignore"):
        data = (np.maximum if is_max else np.minimum)(a.data, b.data).astype(np_dtype(dtype))
    out = derive([a, b], data, dtype)
    # `m_new = tl.maximum(inp, m)` is a max of what both cover, a running max per lane
    # included (gcu300's log_softmax keeps one per lane and reduces it with `tl.max(m, 1)`)
    if is_float(dtype) and is_max:
        out.maxinfo = sm.merge_max(a.maxinfo, b.maxinfo, a.lineage, b.lineage)
        out.lineage = frozenset()
    if not is_float(dtype) and (b.runtime or a.runtime or a.constexpr or b.constexpr):
        out.loaded_from = frozenset()  # clamped: range-checked by construction
    return out


def _fma(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Add(), binop(interp, ast.Mult(), args[0], args[1], node), args[2], node)


def _clamp(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    lo = minmax(interp, [args[0], args[1]], {}, node, True)
    return minmax(interp, [lo, args[2]], {}, node, False)


def _umulhi(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    data = (a.data.astype(np.int64) * b.data.astype(np.int64)) >> 32
    return derive([a, b], data, "int32")


def _div_rn(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Div(), args[0], args[1], node)


def _pointer_choice(c: Any, x: Any, y: Any, node: ast.AST) -> Any:
    """`tl.where(tensor_idx == 0, in_ptr0, in_ptr1)` (flag-gems' vstack picks its input tensor
    per program): a condition the same for the whole program picks one pointer whole. A
    condition that differs between lanes would mix two tensors in one tile: not modelled."""
    cond = to_val(c, node)
    if not cond.is_scalar or cond.unknown:
        raise Unevaluable("`tl.where` between pointers under a per-lane condition", node)
    return x if bool(cond.item()) else y


def _pow(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Pow(), args[0], args[1], node)


BINARY_FLOAT = {"atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot, "div_rz": np.divide}


def binary_float(interp: OpContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """libdevice's two-operand float functions (`atan2(y, x)`, `fmod`, `hypot`, `div_rz`):
    elementwise over the broadcast operands, fp32 unless an operand is wider."""
    a, b = to_val(args[0], node), to_val(args[1], node)
    dtype = promote(a, b)
    dtype = dtype if is_float(dtype) else "fp32"
    shape = bshape(a.shape, b.shape)
    if interp.address_only:
        return light_float(shape, dtype)
    with np.errstate(all="ignore"):
        data = BINARY_FLOAT[name](a.data.astype(np.float64), b.data.astype(np.float64))
    return derive([a, b], np.asarray(data, dtype=np.float64), dtype)


def inline_asm_elementwise(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)`: what the
    assembly computes is not known, but the result is elementwise over the broadcast `args`, of
    `dtype` (a tuple of dtypes gives one block per dtype). The lanes and their tags go on; the
    value is unknown (a branch, mask or address built from it is not judged), and no lane of it
    counts as padding, whose value a reduction rule would otherwise read."""
    names = ("asm", "constraints", "args", "dtype", "is_pure", "pack")
    got = {n: args[i] if i < len(args) else kwargs.get(n) for i, n in enumerate(names)}
    operands = got["args"]
    operands = [to_val(a, node) for a in (operands if isinstance(operands, tuple | list) else [operands])]
    dtypes = got["dtype"] if isinstance(got["dtype"], tuple | list) else [got["dtype"]]
    shape = bshape(*(v.shape for v in operands)) if operands else ()
    outs = []
    for dt in dtypes:
        name = dtype_arg(dt)
        if interp.address_only and is_float(name):
            outs.append(light_float(shape, name))
            continue
        data = np.zeros(shape, dtype=np_dtype(name))
        out = derive(operands, data, name) if operands else Val(data, name)
        out.pad, out.lineage, out.constexpr = None, frozenset(), False
        out.unknown = "the result of inline assembly"
        outs.append(out)
    return tuple(outs) if isinstance(got["dtype"], tuple | list) else outs[0]


OPS = [
    *declare("math", {"inline_asm_elementwise": inline_asm_elementwise}),
    *declare(
        "math",
        {
            "where": _where,
            "maximum": lambda i, a, k, n: minmax(i, a, k, n, True),
            "minimum": lambda i, a, k, n: minmax(i, a, k, n, False),
            "fma": _fma,
            "clamp": _clamp,
            "umulhi": _umulhi,
            "div_rn": _div_rn,
            "fdiv": _div_rn,
            "pow": _pow,
        },
    ),
    *declare("math", {name: named(unary_float, name) for name in UNARY_FLOAT}, method=True),
    *declare("math", {name: named(binary_float, name) for name in BINARY_FLOAT}),
]
