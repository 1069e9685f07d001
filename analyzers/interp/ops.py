"""Triton builtins over abstract values: arithmetic, shapes, creation, math, reductions, casts.

Memory operations (load/store/atomics/block pointers/descriptors) are in ops_memory.py and
`tl.dot` in ops_linalg.py; this module dispatches to them.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzers.interp import softmax as sm
from analyzers.interp import tags as tagops
from analyzers.interp.values import (
    LOW_PRECISION,
    BlockPtr,
    Descriptor,
    DType,
    FullRun,
    Ptr,
    Unmodelled,
    Val,
    is_float,
    norm_dtype,
    scalar,
)

if TYPE_CHECKING:
    from analyzers.interp.interpreter import Interpreter


class Retype(Exception):
    """A pointer parameter's contents turned out to be integers (used as an index): rerun."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


# ---- conversions ---------------------------------------------------------------------------------
def to_val(x: Any, node: ast.AST) -> Val:
    if isinstance(x, Val):
        return x
    if isinstance(x, bool | int | float | np.integer | np.floating):
        return scalar(x, constexpr=True)
    raise Unmodelled(f"a value of kind {type(x).__name__} where a number or tensor was expected", node)


def _np(dtype: str) -> Any:
    if is_float(dtype):
        return np.float64
    if dtype == "int1":
        return np.bool_
    return np.int64


def promote(a: Val, b: Val, op: ast.AST | None = None) -> str:
    da, db = a.dtype, b.dtype
    if a.constexpr and a.is_scalar and not b.constexpr:
        if is_float(da) and not is_float(db):
            return "fp32"
        return db if db != "int1" or da == "int1" else "int32"
    if b.constexpr and b.is_scalar and not a.constexpr:
        if is_float(db) and not is_float(da):
            return "fp32"
        return da if da != "int1" or db == "int1" else "int32"
    if is_float(da) or is_float(db):
        order = ["fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "bf16", "fp16", "fp32", "fp64"]
        fa = da if is_float(da) else None
        fb = db if is_float(db) else None
        if fa and fb and fa != fb:
            if {fa, fb} <= LOW_PRECISION:
                return "fp32"
            return max(fa, fb, key=order.index)
        return fa or fb or "fp32"
    if da == "int1" and db == "int1":
        return "int1"
    if "int64" in (da, db) or "uint64" in (da, db):
        return "int64"
    return "int32"


def bshape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError as e:
        raise Unmodelled(f"incompatible tile shapes {' and '.join(map(str, shapes))}") from e


def bc(arr: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """`np.broadcast_to` (a read-only view), built directly from strides for the contiguous
    arrays that make up nearly every call: this runs several hundred times per program."""
    if arr is None:
        return None
    if arr.shape == shape:
        return arr
    pad = len(shape) - arr.ndim
    if pad < 0 or not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
        return np.broadcast_to(arr, shape)
    strides = [0] * pad
    for have, want, step in zip(arr.shape, shape[pad:], arr.strides, strict=True):
        if have == want:
            strides.append(step)
        elif have == 1:
            strides.append(0)
        else:
            return np.broadcast_to(arr, shape)  # raises numpy's own error
    out = np.ndarray(shape, arr.dtype, arr, 0, tuple(strides))
    out.flags.writeable = False
    return out


def _or(a: np.ndarray | None, b: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if a is None and b is None:
        return None
    if a is None:
        return bc(b, shape)
    if b is None:
        return bc(a, shape)
    return np.logical_or(bc(a, shape), bc(b, shape))


def merge_tags(vals: list[Val], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    tags: dict[str, np.ndarray] = {}
    for v in vals:
        for k, arr in v.tags.items():
            arrb = bc(arr, shape)
            k2 = k
            while k2 in tags:
                m = tagops.merge(tags[k2], arrb)
                if m is not None:
                    tags[k2] = m
                    break
                k2 += "'"
            else:
                tags[k2] = arrb
    return tags


def _combine_pad(vals: list[Val], shape: tuple[int, ...]) -> np.ndarray | None:
    """A lane stands for data outside the tensor when its per-lane operands all do; operands
    broadcast over it (a row statistic, a scalar) do not make it real, but do not hide it either."""
    lane_ops = [v for v in vals if v.data.shape == shape and (v.lineage or v.pad is not None or v.tags)]
    bcast = [v for v in vals if all(v is not x for x in lane_ops) and v.pad is not None]
    pad = None
    if lane_ops:
        if all(v.pad is not None for v in lane_ops):
            pad = bc(lane_ops[0].pad, shape)
            for v in lane_ops[1:]:
                pad = np.logical_and(pad, bc(v.pad, shape))
    elif any(v.pad is not None for v in vals):
        pad = None
        for v in vals:
            pad = _or(pad, v.pad, shape)
    for v in bcast:
        if pad is not None or not lane_ops:
            pad = _or(pad, v.pad, shape)
    return pad


def _plain_constant(v: Val) -> bool:
    return (
        v.constexpr
        and v.is_scalar
        and not (
            v.tags
            or v.lineage
            or v.loaded_from
            or v.grows
            or v.runtime
            or v.maxinfo is not None
            or v.shift is not None
            or v.scale is not None
        )
    )


def _union_terms(vals: list[Val]) -> frozenset[int] | None:
    ts = [v.terms for v in vals if v.terms is not None]
    return frozenset().union(*ts) if ts else None


def _derive_with_constant(a: Val, b: Val, data: np.ndarray, dtype: str) -> Val | None:
    """`x * 0.5`, `x + 1`: a tile and a literal. The tile's lanes, tags and provenance carry over
    unchanged (the common case, kept off derive()'s general merging)."""
    if _plain_constant(b) and not _plain_constant(a):
        v = a
    elif _plain_constant(a) and not _plain_constant(b):
        v = b
    else:
        return None
    if v.data.shape != data.shape:
        return None
    return Val(
        data,
        dtype,
        tags=v.tags,
        index_tags=v.index_tags,
        undef=v.undef,
        pad=v.pad,
        lineage=v.lineage,
        grows=v.grows,
        runtime=v.runtime,
        loaded_from=v.loaded_from,
        overflow_site=v.overflow_site,
        nan_site=v.nan_site,
        unstable_exp=v.unstable_exp,
        unknown=v.unknown,
        undef_site=v.undef_site,
        terms=v.terms,
        src=v.src if is_float(dtype) else None,
    )


def derive(vals: list[Val], data: np.ndarray, dtype: str, **kw: Any) -> Val:
    """A value computed elementwise from `vals`: flags and tags merge, provenance unions."""
    shape = data.shape
    undef = None
    any_tags = any_pad = grows = runtime = False
    constexpr = True
    index_tags = lineage = loaded_from = frozenset()
    overflow_site = nan_site = unstable_exp = unknown = undef_site = None
    srcs = set()
    # one pass over the operands (this runs for every elementwise operation)
    for v in vals:
        if v.undef is not None:
            undef = _or(undef, v.undef, shape)
        undef_site = undef_site if undef_site is not None else v.undef_site
        any_tags = any_tags or bool(v.tags)
        any_pad = any_pad or v.pad is not None
        if v.index_tags:
            index_tags = index_tags | v.index_tags
        if v.lineage:
            lineage = lineage | v.lineage
        if v.loaded_from:
            loaded_from = loaded_from | v.loaded_from
        grows = grows or v.grows
        runtime = runtime or v.runtime
        constexpr = constexpr and v.constexpr
        overflow_site = overflow_site if overflow_site is not None else v.overflow_site
        nan_site = nan_site if nan_site is not None else v.nan_site
        unstable_exp = unstable_exp if unstable_exp is not None else v.unstable_exp
        unknown = unknown or v.unknown
        if v.src:
            srcs.add(v.src)
    out = Val(
        data,
        dtype,
        tags=merge_tags(vals, shape) if any_tags else {},
        index_tags=index_tags,
        undef=undef,
        pad=_combine_pad(vals, shape) if any_pad else None,
        lineage=lineage,
        grows=grows,
        runtime=runtime,
        constexpr=constexpr,
        loaded_from=loaded_from,
        overflow_site=overflow_site,
        nan_site=nan_site,
        unstable_exp=unstable_exp,
        unknown=unknown,
        undef_site=undef_site,
        terms=_union_terms(vals),
    )
    if len(srcs) == 1 and is_float(dtype):
        out.src = srcs.pop()  # `cdiv(seq_len, PAGE)`: still the loaded value, if it is an integer
    for k, x in kw.items():
        setattr(out, k, x)
    return out


def map_ptr(p: Ptr, fn: Any) -> Ptr:
    """A shape operation on a pointer tile: its offsets and index tags move together."""
    return replace(p, offsets=fn(p.offsets), tags={k: fn(a) for k, a in p.tags.items()})


def transform(v: Val, fn: Any, **kw: Any) -> Val:
    """Apply a shape operation (broadcast, transpose, reshape...) to a value and all its lanes."""
    out = v.with_(
        data=fn(v.data),
        tags={k: fn(a) for k, a in v.tags.items()},
        undef=fn(v.undef) if v.undef is not None else None,
        pad=fn(v.pad) if v.pad is not None else None,
    )
    for k, x in kw.items():
        setattr(out, k, x)
    return out


def as_int_array(v: Val, node: ast.AST) -> np.ndarray:
    if is_float(v.dtype):
        if v.src:
            raise Retype(v.src)
        raise Unmodelled("a floating-point value used as an index", node)
    return v.data.astype(np.int64)


# ---- arithmetic ---------------------------------------------------------------------------------
def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))
    return q + fix


def _trunc_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    return a - _trunc_div(a, b) * b


_LIGHT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def light_float(shape: tuple[int, ...], dtype: str) -> Val:
    """Floating-point data in an address-only program: the right shape and type, no tags or
    checks (its values never reach an address, a mask or a branch, or the program reruns)."""
    return Val(np.zeros(shape), dtype)


def binop(interp: Interpreter, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
    from analyzers.interp import ops_memory

    if isinstance(a, Ptr) or isinstance(b, Ptr):
        return ops_memory.pointer_arith(interp, op, a, b, node)
    if isinstance(a, tuple) and isinstance(b, tuple) and isinstance(op, ast.Add):
        return a + b
    a, b = to_val(a, node), to_val(b, node)
    if isinstance(op, ast.Add | ast.Sub):
        for v, other in ((a, b), (b, a)):
            if v.src and is_float(v.dtype) and not is_float(other.dtype) and other.grows and not v.grows:
                # `start + pid_m * BLOCK_M`, `base + tl.arange(...)`: a loaded value offset by a
                # program or lane index is an index itself, so its tensor holds integers
                raise Retype(v.src)
    dtype = promote(a, b)
    if interp.address_only and (is_float(a.dtype) or is_float(b.dtype)) and isinstance(op, _LIGHT_OPS):
        return light_float(bshape(a.shape, b.shape), dtype if is_float(dtype) else "fp32")
    x, y = a.data, b.data
    if isinstance(op, ast.Add):
        data = x + y
    elif isinstance(op, ast.Sub):
        data = x - y
    elif isinstance(op, ast.Mult):
        data = x * y
    elif isinstance(op, ast.Div):
        if not is_float(dtype):
            dtype = "fp32"
        data = np.true_divide(x.astype(np.float64), y.astype(np.float64))
    elif isinstance(op, ast.FloorDiv):
        for v, other in ((a, b), (b, a)):
            if v.src and is_float(v.dtype) and not is_float(other.dtype):
                raise Retype(v.src)  # `seq_len // PAGE`: integer division of loaded data
        if is_float(dtype):
            data = np.floor_divide(x, y)
        else:
            data = _trunc_div(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.Mod):
        data = np.fmod(x, y) if is_float(dtype) else _trunc_mod(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.Pow):
        data = np.power(x, y)
    elif isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
        if is_float(a.dtype) or is_float(b.dtype):
            src = a.src if is_float(a.dtype) else b.src
            if src:
                raise Retype(src)
        fn = {ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor}[type(op)]
        if dtype == "int1":
            data = fn(x.astype(bool), y.astype(bool))
        else:
            data = fn(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.LShift | ast.RShift):
        data = (np.left_shift if isinstance(op, ast.LShift) else np.right_shift)(
            x.astype(np.int64), y.astype(np.int64)
        )
    else:
        raise Unmodelled(f"the operator {type(op).__name__}", node)
    data = np.asarray(data, dtype=_np(dtype))
    out = _derive_with_constant(a, b, data, dtype) or derive([a, b], data, dtype)
    if dtype == "int1":
        out.checked = a.checked | b.checked
    _int_provenance(interp, op, a, b, out, node)
    _float_semantics(interp, op, a, b, out, node)
    if isinstance(op, ast.Add | ast.Sub) and (a.kcover is not None or b.kcover is not None):
        from analyzers.interp.ops_linalg import merge_cover

        out.kcover = merge_cover(a.kcover, b.kcover)
    elif isinstance(op, ast.Mult | ast.Div) and (a.kcover is None) != (b.kcover is None):
        out.kcover = a.kcover if a.kcover is not None else b.kcover  # scaling keeps what was summed
    return out


def _int_provenance(interp: Interpreter, op: ast.operator, a: Val, b: Val, out: Val, node: ast.AST) -> None:
    if is_float(out.dtype):
        return
    if isinstance(op, ast.Mult) and out.dtype == "int32":
        if (a.runtime and not a.grows and np.all(a.data == 1)) or (
            b.runtime and not b.grows and np.all(b.data == 1)
        ):
            pass  # a unit (innermost) stride: the product is the index itself
        elif a.grows and b.runtime and b.param is not None and not b.grows:
            out.overflow_site = (node, interp.smap, "left", _operand_facts(a, b))
        elif b.grows and a.runtime and a.param is not None and not a.grows:
            out.overflow_site = (node, interp.smap, "right", _operand_facts(b, a))
    if isinstance(op, ast.Mod) and b.runtime and not b.loaded_from:
        out.loaded_from = frozenset()  # wrapped into [0, size): range-checked by construction
    if (
        isinstance(op, ast.FloorDiv | ast.Mod)
        and a.pid_axis is not None
        and b.param is not None
        and b.runtime
        and not interp.launch.assumed
        and not interp.sink.has("grid-decomposition")
    ):
        axis = a.pid_axis
        extent = interp.launch.grid[axis]
        d = int(b.item()) if b.is_scalar else 0
        if d > 0 and (extent % d != 0 or extent < d):
            interp.grid_problem = True
            interp.fact(
                "grid-decomposition",
                node,
                related=[],
                axis=axis,
                extent=extent,
                divisor=b.param,
                divisor_value=d,
                op="//" if isinstance(op, ast.FloorDiv) else "%",
            )


def _operand_facts(grows: Val, factor: Val) -> dict[str, Any]:
    """The growing index's largest value at this probe and the stride or size it multiplies."""
    g = np.asarray(grows.data)
    return {
        "grows_max": int(np.max(np.abs(g))) if g.size else 0,
        "factor": int(np.max(np.abs(np.asarray(factor.data)))),
        "factor_name": factor.param or "the stride",
    }


def _float_semantics(interp: Interpreter, op: ast.operator, a: Val, b: Val, out: Val, node: ast.AST) -> None:
    if not is_float(out.dtype):
        return
    # max tokens travel through scaling by constants; subtraction makes a shift or a rescale exponent
    if isinstance(op, ast.Sub):
        if b.maxinfo is not None and a.maxinfo is not None:
            out.shift = ("rescale", a.maxinfo, b.maxinfo)
            out.lineage = frozenset()
        elif b.maxinfo is not None:
            out.shift = b.maxinfo
            out.lineage = a.lineage
        if out.nan_site is None:
            nan_new = np.isnan(out.data) & ~np.isnan(bc(a.data, out.shape)) & ~np.isnan(bc(b.data, out.shape))
            if nan_new.any():
                out.nan_site = (node, interp.smap)
    elif isinstance(op, ast.Mult | ast.Div) and (a.maxinfo is not None or b.maxinfo is not None):
        other = b if a.maxinfo is not None else a
        if other.is_scalar or other.constexpr or not other.lineage:
            out.maxinfo = a.maxinfo if a.maxinfo is not None else b.maxinfo
    elif (
        isinstance(op, ast.Add)
        and b.maxinfo is None
        and a.maxinfo is None
        and a.shift is not None
        and not b.lineage
    ):
        out.shift = a.shift
    if isinstance(op, ast.Mult) and (a.shift is not None or b.shift is not None):
        s = a.shift if a.shift is not None else b.shift
        other = b if a.shift is not None else a
        if other.is_scalar or not other.lineage:
            out.shift = s
    if isinstance(op, ast.Div) and out.nan_site is None:
        nan_new = np.isnan(out.data) & ~np.isnan(bc(a.data, out.shape)) & ~np.isnan(bc(b.data, out.shape))
        if nan_new.any():
            out.nan_site = (node, interp.smap)
    # scale tags
    sa, sb = a.scale, b.scale
    if sa is None and sb is None:
        return
    if isinstance(op, ast.Mult):
        res, problem, norm = sm.mul_scales(sa, sb)
    elif isinstance(op, ast.Add | ast.Sub):
        res, problem, norm = sm.add_scales(sa, sb)
    elif isinstance(op, ast.Div):
        res, problem, norm = _div_scales(sa, sb, node, interp, a.terms, b.terms)
    else:
        res, problem, norm = (sa if sa is not None else sb), None, None
    out.scale = res
    _scale_problem(interp, problem, norm, node)


def _div_scales(
    sa: Any, sb: Any, node: ast.AST, interp: Interpreter, ta: Any = None, tb: Any = None
) -> tuple[Any, str | None, Any]:
    if ta is not None and tb is not None and ta != tb and sm.is_token(sa) and sm.is_token(sb):
        return sm.ANY, "division", None  # the sum holds other score blocks than the accumulator
    if sm.is_token(sa) and sm.is_token(sb):
        if sa is sb:
            return sm.Normalized(node, interp.smap), None, None
        return sm.ANY, "division", None
    if sm.is_token(sa) and sb in (sm.ANY,):
        return sm.Normalized(node, interp.smap), None, None
    return sa, None, None


def _scale_problem(interp: Interpreter, problem: str | None, norm: Any, node: ast.AST) -> None:
    if problem is None:
        return
    if problem == "normalized":
        interp.sink.add(
            _fact(
                interp,
                "normalized-early",
                norm.node,
                norm.smap,
                related=[(node, interp.smap, "where the normalized value is rescaled or accumulated again")],
            )
        )
    elif problem == "division":
        interp.fact("division-scale", node)
    else:
        interp.fact("scale-mismatch", node)


def _fact(interp: Interpreter, kind: str, node: ast.AST, smap: Any, related: list[Any]) -> Any:
    from analyzers.interp.facts import Fact

    return Fact(
        kind,
        node,
        smap,
        {
            "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
            "sizes": interp.launch.describe_sizes(),
            "probe": interp.launch.kind,
        },
        related,
    )


def compare(interp: Interpreter, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
    if isinstance(op, ast.Is | ast.IsNot):
        same = a is b or (a is None and b is None)
        return scalar(same if isinstance(op, ast.Is) else not same, constexpr=True)
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        # constexpr strings and None (`ACTIVATION == "relu"`, `bias_ptr is None`): decided statically
        py = {
            ast.Eq: lambda x, y: x == y,
            ast.NotEq: lambda x, y: x != y,
            ast.In: lambda x, y: x in y,
            ast.NotIn: lambda x, y: x not in y,
        }.get(type(op))
        if py is None:
            raise Unmodelled(f"comparing {type(a).__name__} with {type(b).__name__}", node)
        unwrap = lambda v: v.item() if isinstance(v, Val) else v  # noqa: E731
        return scalar(
            bool(py(unwrap(a), unwrap(b) if not isinstance(b, tuple | list) else [unwrap(x) for x in b])),
            constexpr=True,
        )
    if isinstance(op, ast.In | ast.NotIn):
        if isinstance(b, tuple | list):
            av = to_val(a, node).item()
            hit = any(av == to_val(x, node).item() for x in b)
            return scalar(hit if isinstance(op, ast.In) else not hit, constexpr=True)
        raise Unmodelled("`in` inside a kernel", node)
    a, b = to_val(a, node), to_val(b, node)
    for v, other in ((a, b), (b, a)):
        if v.src and is_float(v.dtype) and not is_float(other.dtype) and not other.constexpr:
            raise Retype(v.src)
        if v.src and is_float(v.dtype) and other.constexpr and not is_float(other.dtype) and other.is_scalar:
            raise Retype(v.src)
    if interp.address_only and (is_float(a.dtype) or is_float(b.dtype)):
        # a condition on stand-in values: fine for picking between stand-ins (tl.where on
        # floats); as a mask, a branch or an index it raises Unmodelled, and the program reruns
        return Val(
            np.zeros(bshape(a.shape, b.shape), dtype=np.bool_),
            "int1",
            unknown="floating-point data in an address-only program",
        )
    fn = {
        ast.Eq: np.equal,
        ast.NotEq: np.not_equal,
        ast.Lt: np.less,
        ast.LtE: np.less_equal,
        ast.Gt: np.greater,
        ast.GtE: np.greater_equal,
    }[type(op)]
    data = np.asarray(fn(a.data, b.data), dtype=np.bool_)
    out = derive([a, b], data, "int1")
    examined = a.loaded_from | b.loaded_from
    if examined and interp.lower_only_tensors:
        # a lower bound on an id shifted into a window leaves the window's upper end open
        examined = frozenset(s for s in examined if interp.site_name.get(s) not in interp.lower_only_tensors)
    out.checked = a.checked | b.checked | examined
    out.lineage = frozenset()
    out.scale = None
    return out


# ---- subscripts and shapes ----------------------------------------------------------------------
def subscript(interp: Interpreter, base: Any, sl: ast.expr, node: ast.AST, env: dict[str, Any]) -> Any:
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    index: list[Any] = []
    for it in items:
        if isinstance(it, ast.Constant) and it.value is None:
            index.append(None)
        elif isinstance(it, ast.Slice) and it.lower is None and it.upper is None and it.step is None:
            index.append(slice(None))
        elif isinstance(it, ast.Name) and it.id == "None":
            index.append(None)
        else:
            raise Unmodelled(
                f"the subscript `{ast.unparse(sl)}` (only `:` and `None` are tile indexing)", node
            )
    idx = tuple(index)

    def fn(arr: np.ndarray) -> np.ndarray:
        return arr[idx]

    if isinstance(base, Ptr):
        return map_ptr(base, fn)
    if isinstance(base, Val):
        return transform(base, fn)
    raise Unmodelled(f"subscript of {type(base).__name__}", node)


def reshape_val(v: Any, shape: tuple[int, ...], node: ast.AST) -> Any:
    def fn(a: np.ndarray) -> np.ndarray:
        return np.reshape(np.ascontiguousarray(a), shape)

    try:
        if isinstance(v, Ptr):
            return map_ptr(v, fn)
        return transform(v, fn)
    except ValueError as e:
        raise Unmodelled(f"a reshape to {shape}", node) from e


def broadcast_val(v: Any, shape: tuple[int, ...], node: ast.AST) -> Any:
    def fn(a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(a, shape)

    try:
        if isinstance(v, Ptr):
            return map_ptr(v, fn)
        return transform(to_val(v, node), fn)
    except ValueError as e:
        raise Unmodelled(f"a broadcast to {shape}", node) from e


def trans(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    v = args[0]
    spec = kwargs.get("dims", args[1] if len(args) == 2 else (args[1:] if len(args) > 2 else None))
    if isinstance(spec, tuple | list):
        dims = [int(to_val(d, node).item()) for d in spec]
    elif spec is not None:
        dims = [int(to_val(spec, node).item())]
    else:
        dims = None

    def fn(a: np.ndarray) -> np.ndarray:
        return np.transpose(a, dims) if dims else np.swapaxes(a, -1, -2)

    if isinstance(v, Ptr):
        return map_ptr(v, fn)
    return transform(to_val(v, node), fn)


def _shape_arg(x: Any, node: ast.AST) -> tuple[int, ...]:
    if isinstance(x, tuple | list):
        return tuple(int(to_val(s, node).item()) for s in x)
    return (int(to_val(x, node).item()),)


# ---- module attributes --------------------------------------------------------------------------
DTYPE_NAMES = {
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float8e4nv",
    "float8e5",
    "float8e4b15",
    "float8e4b8",
    "float8e5b16",
}


def module_attribute(dotted: str, node: ast.AST) -> Any:
    last = dotted.split(".")[-1]
    if last in DTYPE_NAMES:
        return DType(norm_dtype(last))
    if last == "constexpr":
        return ("tl", "constexpr")
    if dotted in ("math.pi",):
        return scalar(math.pi, constexpr=True)
    if dotted in ("math.e",):
        return scalar(math.e, constexpr=True)
    if dotted in ("math.inf",):
        return scalar(math.inf, constexpr=True)
    return ("tl", last)


# ---- calls --------------------------------------------------------------------------------------
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
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "fast_expf": np.exp,
    "fast_exp2f": np.exp2,
    "fast_logf": np.log,
    "fast_log2f": np.log2,
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
}


class _LATE:
    """Modules that import this one, bound on first use (a per-call import costs)."""

    memory: Any = None
    linalg: Any = None


def call(interp: Interpreter, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    if _LATE.memory is None:
        from analyzers.interp import ops_linalg, ops_memory

        _LATE.memory, _LATE.linalg = ops_memory, ops_linalg
    ops_memory, ops_linalg = _LATE.memory, _LATE.linalg
    if name in ops_memory.MEMORY:
        return ops_memory.MEMORY[name](interp, args, kwargs, node)
    if name == "dot":
        return ops_linalg.dot(interp, args, kwargs, node)
    if name in REDUCTIONS:
        return reduce_(interp, name, args, kwargs, node)
    if name == "associative_scan":
        return associative_scan(interp, args, kwargs, node)
    fn = BUILTINS.get(name)
    if fn is not None:
        return fn(interp, args, kwargs, node)
    if name in UNARY_FLOAT:
        return unary_float(interp, name, args, kwargs, node)
    raise Unmodelled(f"`{name}`", node)


def unary_float(
    interp: Interpreter, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Val:
    x = to_val(args[0], node)
    dtype = x.dtype if is_float(x.dtype) else "fp32"
    if name in ("isnan", "isinf", "signbit"):
        dtype = "int1"
    if interp.address_only:
        if dtype == "int1":
            raise FullRun()
        return light_float(x.shape, dtype)
    with np.errstate(all="ignore"):
        if name == "erf":
            data = (
                np.vectorize(math.erf, otypes=[np.float64])(x.data.astype(np.float64))
                if x.data.size
                else x.data.astype(np.float64)
            )
        else:
            data = UNARY_FLOAT[name](x.data.astype(np.float64))
    out = derive([x], np.asarray(data, dtype=_np(dtype)), dtype)
    if name in ("exp", "exp2", "fast_expf", "fast_exp2f"):
        _exp_semantics(interp, x, out, node)
    return out


def _exp_semantics(interp: Interpreter, x: Val, out: Val, node: ast.AST) -> None:
    shift = x.shift
    if isinstance(shift, tuple) and shift and shift[0] == "rescale":
        out.scale = sm.Rescale(shift[1], shift[2])
        out.lineage = frozenset()
        return
    if isinstance(shift, sm.MaxToken):
        if shift.empty or not x.lineage <= shift.covers:
            interp.fact("stale-max", node)
            out.scale = sm.ANY
        else:
            out.scale = shift
        out.terms = x.lineage
        return
    if x.lineage and x.maxinfo is None:
        out.unstable_exp = (node, interp.smap)


def _where(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    c, x, y = (to_val(a, node) for a in args[:3])
    shape = bshape(c.shape, x.shape, y.shape)
    dtype = promote(x, y)
    if interp.address_only:
        if is_float(c.dtype):
            raise FullRun()
        if is_float(dtype):
            return light_float(shape, dtype)
    cond = bc(c.data.astype(bool), shape)
    data = np.where(cond, bc(x.data, shape), bc(y.data, shape)).astype(_np(dtype))
    out = derive([x, y], data, dtype)
    # lanes take their flags and tags from the side they come from
    for attr in ("undef", "pad"):
        xa, ya = getattr(x, attr), getattr(y, attr)
        if xa is None and ya is None:
            continue
        xa = bc(xa, shape) if xa is not None else np.zeros(shape, bool)
        ya = bc(ya, shape) if ya is not None else np.zeros(shape, bool)
        setattr(out, attr, np.where(cond, xa, ya))
    tags = {}
    for k in set(x.tags) | set(y.tags):
        if k in x.tags and k in y.tags:
            tags[k] = np.where(cond, bc(x.tags[k], shape), bc(y.tags[k], shape))
        else:
            tags[k] = bc((x.tags if k in x.tags else y.tags)[k], shape)
    out.tags = tags
    out.undef = out.undef if c.undef is None else _or(out.undef, c.undef, shape)
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


def _minmax(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST, is_max: bool) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    dtype = promote(a, b)
    if interp.address_only and is_float(dtype):
        return light_float(bshape(a.shape, b.shape), dtype)
    with np.errstate(all="ignore"):
        data = (np.maximum if is_max else np.minimum)(a.data, b.data).astype(_np(dtype))
    out = derive([a, b], data, dtype)
    if (
        is_float(dtype)
        and is_max
        and (a.maxinfo is not None or b.maxinfo is not None or _all_neg_inf(a) or _all_neg_inf(b))
    ):
        out.maxinfo = sm.merge_max(a.maxinfo, b.maxinfo, a.lineage, b.lineage)
        out.lineage = frozenset()
    if not is_float(dtype) and (b.runtime or a.runtime or a.constexpr or b.constexpr):
        out.loaded_from = frozenset()  # clamped: range-checked by construction
    return out


def _all_neg_inf(v: Val) -> bool:
    return is_float(v.dtype) and v.data.size > 0 and bool(np.all(np.isneginf(v.data)))


def _program_id(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    axis = int(to_val(args[0] if args else kwargs.get("axis"), node).item())
    if axis >= interp.launch.grid_axes and not interp.launch.assumed:
        interp.grid_problem = True
        interp.fact(
            "grid-axis",
            node,
            axis=axis,
            grid_axes=interp.launch.grid_axes,
            grid=interp.launch.grid[: interp.launch.grid_axes],
        )
    return scalar(interp.pid[axis], "int32", grows=True, pid_axis=axis)


def _num_programs(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    axis = int(to_val(args[0] if args else kwargs.get("axis"), node).item())
    return scalar(interp.launch.grid[axis], "int32", runtime=True)


def _arange(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    lo, hi = (int(to_val(a, node).item()) for a in args[:2])
    if hi - lo > 1 << 16 or hi < lo:
        raise Unmodelled(f"tl.arange({lo}, {hi})", node)
    return Val(np.arange(lo, hi, dtype=np.int64), "int32")


def _dtype_arg(x: Any, default: str = "fp32") -> str:
    if isinstance(x, DType):
        return x.name
    if isinstance(x, str):
        return norm_dtype(x)
    return default


def _zeros(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    shape = _shape_arg(args[0] if args else kwargs["shape"], node)
    dtype = _dtype_arg(args[1] if len(args) > 1 else kwargs.get("dtype"))
    out = Val(np.zeros(shape, dtype=_np(dtype)), dtype, scale=sm.ANY, init_site=(node, interp.smap))
    return out


def _full(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    shape = _shape_arg(args[0] if args else kwargs["shape"], node)
    value = to_val(args[1] if len(args) > 1 else kwargs["value"], node)
    dtype = _dtype_arg(args[2] if len(args) > 2 else kwargs.get("dtype"), value.dtype)
    data = np.full(shape, value.item(), dtype=_np(dtype))
    out = Val(data, dtype, init_site=(node, interp.smap))
    if is_float(dtype) and np.isneginf(value.item()):
        out.maxinfo = sm.MaxToken(frozenset(), empty=True)
    elif is_float(dtype) and value.item() == 0:
        out.scale = sm.ANY
    out.grows, out.runtime, out.loaded_from = value.grows, value.runtime, value.loaded_from
    return out


def _zeros_like(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = to_val(args[0], node)
    dtype = _dtype_arg(kwargs.get("dtype"), x.dtype)
    return Val(np.zeros(x.shape, dtype=_np(dtype)), dtype, scale=sm.ANY, init_site=(node, interp.smap))


def _full_like(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = to_val(args[0], node)
    return _full(
        interp,
        [x.shape, args[1] if len(args) > 1 else kwargs["value"], kwargs.get("dtype", DType(x.dtype))],
        {},
        node,
    )


def _cdiv(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    s = binop(interp, ast.Add(), a, b, node)
    s = binop(interp, ast.Sub(), s, scalar(1, constexpr=True), node)
    return binop(interp, ast.FloorDiv(), s, b, node)


def _identity(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    return args[0]


def _nothing(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
    return None


def _device_assert(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
    c = args[0] if args else kwargs.get("cond")
    if isinstance(c, Val):
        interp.branch_checked |= set(c.checked) | set(c.loaded_from)
    return None


def cast(interp: Interpreter, x: Any, dtype: str, node: ast.AST, bitcast: bool = False) -> Any:
    if isinstance(x, Ptr):
        raise Unmodelled("a pointer cast", node)
    x = to_val(x, node)
    if bitcast:
        raise Unmodelled("a bitcast", node)
    if not is_float(dtype) and is_float(x.dtype) and x.src and x.load_node is not None:
        # `tl.load(ids).to(tl.int64)`: the tensor holds integers; `(x / scale).to(tl.int8)` is a
        # real float-to-int conversion (quantization) and says nothing about x
        raise Retype(x.src)
    if interp.address_only and is_float(x.dtype) and not is_float(dtype):
        raise FullRun()
    with np.errstate(all="ignore"):
        if is_float(dtype):
            data = x.data.astype(np.float64)
        elif dtype == "int1":
            data = x.data.astype(bool)
        else:
            data = (
                np.trunc(np.nan_to_num(x.data)).astype(np.int64)
                if is_float(x.dtype)
                else x.data.astype(np.int64)
            )
    out = x.with_(data=np.asarray(data), dtype=dtype, constexpr=x.constexpr)
    return out


def _cast_call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    dtype = _dtype_arg(args[1] if len(args) > 1 else kwargs.get("dtype"))
    return cast(
        interp, args[0], dtype, node, bool(kwargs.get("bitcast") and to_val(kwargs["bitcast"], node).item())
    )


def _builtin_minmax(
    interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST, is_max: bool
) -> Any:
    vals = [to_val(a, node) for a in args]
    out = vals[0]
    for v in vals[1:]:
        out = _minmax(interp, [out, v], {}, node, is_max)
    return out


def _float_builtin(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a = args[0]
    if isinstance(a, str):
        return scalar(float(a), "fp32", constexpr=True)
    return scalar(float(to_val(a, node).item()), "fp32", constexpr=True)


def _int_builtin(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    v = to_val(args[0], node)
    return v.with_(data=np.asarray(int(v.item())), dtype="int32")


def _fma(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Add(), binop(interp, ast.Mult(), args[0], args[1], node), args[2], node)


def _clamp(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    lo = _minmax(interp, [args[0], args[1]], {}, node, True)
    return _minmax(interp, [lo, args[2]], {}, node, False)


def _expand_dims(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    axis = args[1] if len(args) > 1 else kwargs["axis"]
    axes = [int(to_val(a, node).item()) for a in (axis if isinstance(axis, tuple | list) else [axis])]

    def fn(a: np.ndarray) -> np.ndarray:
        return np.expand_dims(a, tuple(axes))

    v = args[0]
    if isinstance(v, Ptr):
        return map_ptr(v, fn)
    return transform(to_val(v, node), fn)


def _reshape(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    shape = args[1:] if len(args) > 2 else (args[1] if len(args) > 1 else kwargs["shape"])
    return reshape_val(args[0], _shape_arg(shape, node), node)


def _broadcast_to(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    shape = args[1:] if len(args) > 2 else (args[1] if len(args) > 1 else kwargs["shape"])
    return broadcast_val(args[0], _shape_arg(shape, node), node)


def _broadcast(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    a, b = to_val(args[0], node), to_val(args[1], node)
    shape = bshape(a.shape, b.shape)
    return broadcast_val(a, shape, node), broadcast_val(b, shape, node)


def _split(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.split(x)`: the two halves of a last dimension of size 2."""
    x = to_val(args[0], node)
    if not x.shape or x.shape[-1] != 2:
        raise Unmodelled("tl.split of a tile whose last dimension is not 2", node)
    return transform(x, lambda a: a[..., 0]), transform(x, lambda a: a[..., 1])


def _join(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.join(a, b)`: stacked on a new last dimension of size 2."""
    a, b = to_val(args[0], node), to_val(args[1], node)
    shape = bshape(a.shape, b.shape)
    a, b = broadcast_val(a, shape, node), broadcast_val(b, shape, node)
    data = np.stack([a.data, b.data], axis=-1)
    out = derive([a, b], data[..., 0], promote(a, b))
    return transform(out, lambda arr: np.stack([arr, arr], axis=-1)).with_(data=data)


def _rand(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    offs = to_val(args[1], node)
    rng = np.random.default_rng(7)
    return Val(rng.random(offs.shape), "fp32")


def _umulhi(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    data = (a.data.astype(np.int64) * b.data.astype(np.int64)) >> 32
    return derive([a, b], data, "int32")


def _div_rn(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Div(), args[0], args[1], node)


def _pow(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    return binop(interp, ast.Pow(), args[0], args[1], node)


def _range_call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    raise Unmodelled("`range` outside a for loop header", node)


def _len(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = args[0]
    if isinstance(x, tuple | list):
        return scalar(len(x), constexpr=True)
    raise Unmodelled("len() of a tensor", node)


BUILTINS: dict[str, Any] = {
    "program_id": _program_id,
    "num_programs": _num_programs,
    "arange": _arange,
    "zeros": _zeros,
    "full": _full,
    "zeros_like": _zeros_like,
    "full_like": _full_like,
    "cdiv": _cdiv,
    "where": _where,
    "maximum": lambda i, a, k, n: _minmax(i, a, k, n, True),
    "minimum": lambda i, a, k, n: _minmax(i, a, k, n, False),
    "multiple_of": _identity,
    "max_contiguous": _identity,
    "max_constancy": _identity,
    "constexpr": _identity,
    "static_assert": _nothing,
    "static_print": _nothing,
    "device_print": _nothing,
    "debug_barrier": _nothing,
    "print": _nothing,
    "device_assert": _device_assert,
    "assume": _device_assert,
    "trans": trans,
    "permute": trans,
    "reshape": _reshape,
    "view": _reshape,
    "broadcast_to": _broadcast_to,
    "broadcast": _broadcast,
    "expand_dims": _expand_dims,
    "cast": _cast_call,
    "cast_to": lambda i, a, k, n: cast(i, a[0], a[1].name, n),
    "float": _float_builtin,
    "int": _int_builtin,
    "min": lambda i, a, k, n: _builtin_minmax(i, a, k, n, False),
    "max_builtin": lambda i, a, k, n: _builtin_minmax(i, a, k, n, True),
    "fma": _fma,
    "clamp": _clamp,
    "split": _split,
    "join": _join,
    "rand": _rand,
    "randn": _rand,
    "umulhi": _umulhi,
    "div_rn": _div_rn,
    "fdiv": _div_rn,
    "pow": _pow,
    "range": _range_call,
    "len": _len,
    "abs_builtin": lambda i, a, k, n: unary_float(i, "abs", a, k, n),
}


# ---- reductions ----------------------------------------------------------------------------------
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "cumsum", "cumprod", "prod"}


def reduce_(interp: Interpreter, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    if (
        interp.address_only
        and name in ("argmax", "argmin")
        and args
        and is_float(to_val(args[0], node).dtype)
    ):
        raise FullRun()  # an index chosen by floating-point data
    if (
        name == "max"
        and len(args) >= 2
        and "axis" not in kwargs
        and isinstance(args[0], Val)
        and isinstance(args[1], Val)
        and args[0].is_scalar
        and args[1].is_scalar
    ):
        return _builtin_minmax(interp, args, kwargs, node, True)
    if (
        name == "min"
        and len(args) >= 2
        and isinstance(args[0], Val)
        and isinstance(args[1], Val)
        and args[0].is_scalar
        and args[1].is_scalar
    ):
        return _builtin_minmax(interp, args, kwargs, node, False)
    x = to_val(args[0], node)
    axis_arg = args[1] if len(args) > 1 else kwargs.get("axis")
    if name == "reduce":
        combine = args[2] if len(args) > 2 else kwargs.get("combine_fn")
        kind = None
        if isinstance(combine, tuple) and combine and combine[0] == "helper":
            kind = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min"}.get(
                _combine_kind(interp.helpers[combine[1]].func) or ""
            )
        if kind is None:
            raise Unmodelled("`tl.reduce` with a custom combine function", node)
        return reduce_(interp, kind, args[:2], {k: v for k, v in kwargs.items() if k != "combine_fn"}, node)
    axis = None if axis_arg is None else int(to_val(axis_arg, node).item())
    keep = bool(kwargs.get("keep_dims") and to_val(kwargs["keep_dims"], node).item())
    if axis is not None and axis < 0:
        axis += x.data.ndim
    if interp.address_only and is_float(x.dtype) and name in ("sum", "max", "min", "prod"):
        return light_float(np.sum(x.data, axis=axis, keepdims=keep).shape, x.dtype)
    data = x.data
    identity = {
        "sum": 0.0,
        "xor_sum": 0,
        "cumsum": 0.0,
        "max": -np.inf,
        "argmax": -np.inf,
        "min": np.inf,
        "argmin": np.inf,
        "cumprod": 1.0,
        "prod": 1.0,
    }[name]
    # masked-off garbage (MB004) and outside-extent lanes that are not neutral (DF003)
    if x.undef is not None and x.undef.any():
        und = bc(x.undef, x.shape)
        if name in ("cumsum", "cumprod"):
            # a scan carries garbage forward only: a defined lane after an undefined one
            ax = axis if axis is not None else 0
            rev = bool(kwargs.get("reverse") and to_val(kwargs["reverse"], node).item())
            u = np.flip(und, ax) if rev else und
            mixed = bool(np.any(np.logical_or.accumulate(u, axis=ax) & ~u))
        elif axis is None:
            mixed = bool(und.any() and not und.all())
        else:
            mixed = bool(np.any(und.any(axis=axis) & ~und.all(axis=axis)))
        if mixed and interp.sink.first_time(("undef", id(x.undef_site[0]) if x.undef_site else None)):
            lane = np.argwhere(und)[0].tolist()
            interp.fact("undef-reduced", node, op=name, lane=lane, consumer="reduction", load=x.undef_site)
    if x.pad is not None and x.pad.any() and name not in ("argmax", "argmin"):
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
        if bad.any():
            lane = np.argwhere(bad)[0].tolist()
            interp.fact(
                "pad-reduced",
                node,
                op=name,
                lane=lane,
                value=float(data[tuple(lane)]) if data.ndim else float(data),
                identity=identity,
            )
    if x.unstable_exp is not None and name in ("sum",):
        enode, esmap = x.unstable_exp
        from analyzers.interp.facts import Fact

        interp.sink.add(
            Fact(
                "unstable-exp",
                enode,
                esmap,
                {
                    "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                    "sizes": interp.launch.describe_sizes(),
                    "probe": interp.launch.kind,
                },
                [(node, interp.smap, "the sum that normalizes it")],
            )
        )
    with np.errstate(all="ignore"):
        if name in ("cumsum", "cumprod"):
            ax = axis if axis is not None else 0
            rev = bool(kwargs.get("reverse") and to_val(kwargs["reverse"], node).item())
            d = np.flip(data, ax) if rev else data
            r = (np.cumsum if name == "cumsum" else np.cumprod)(d, axis=ax)
            r = np.flip(r, ax) if rev else r
            out = derive([x], np.asarray(r), x.dtype if name != "cumsum" or is_float(x.dtype) else x.dtype)
            return out
        fn = {
            "sum": np.sum,
            "max": np.max,
            "min": np.min,
            "argmax": np.argmax,
            "argmin": np.argmin,
            "xor_sum": lambda a, axis=None, keepdims=False: np.bitwise_xor.reduce(
                a.astype(np.int64), axis=axis, keepdims=keepdims
            ),
            "prod": np.prod,
        }[name]
        if data.size == 0:
            raise Unmodelled("a reduction of an empty tile", node)
        if name in ("argmax", "argmin"):
            r = fn(data, axis=axis)
            if keep and axis is not None:
                r = np.expand_dims(r, axis)
        else:
            r = fn(data, axis=axis, keepdims=keep)
    dtype = x.dtype
    if (
        name in ("argmax", "argmin")
        or name == "sum"
        and not is_float(dtype)
        and dtype in ("int1", "int8", "int16")
    ):
        dtype = "int32"

    def red(a: np.ndarray | None, how: str) -> np.ndarray | None:
        if a is None:
            return None
        a = bc(a, x.shape)
        if how == "all":
            r2 = a.all(axis=axis, keepdims=keep) if axis is not None else np.asarray(a.all())
        else:
            r2 = a.any(axis=axis, keepdims=keep) if axis is not None else np.asarray(a.any())
        return np.asarray(r2)

    tags: dict[str, np.ndarray] = {}
    for k, t in x.tags.items():
        t = bc(t, x.shape)
        if axis is None:
            flat = t.reshape(-1)
            if flat.size and not tagops.varies(flat, 0):
                tags[k] = np.asarray(np.fmax.reduce(flat))
            continue
        if not tagops.varies(t, axis):
            tags[k] = tagops.collapse(t, axis, keep)
    out = Val(
        np.asarray(r, dtype=_np(dtype)),
        dtype,
        tags=tags,
        index_tags=x.index_tags,
        undef=red(x.undef, "all"),
        pad=red(x.pad, "all"),
        lineage=x.lineage,
        scale=x.scale,
        grows=x.grows,
        runtime=x.runtime,
        loaded_from=x.loaded_from,
        unknown=x.unknown,
        nan_site=x.nan_site,
        kcover=x.kcover,
        terms=x.terms,
    )
    if name in ("max",) and is_float(dtype):
        out.maxinfo = sm.MaxToken(x.lineage | (x.maxinfo.covers if x.maxinfo is not None else frozenset()))
        out.lineage = frozenset()
    return out


def associative_scan(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.associative_scan(x, axis, combine)` when `combine` is a jit helper that adds,
    multiplies, or takes the max or min of its two arguments: a cumulative reduction."""
    x = args[0] if args else kwargs.get("input")
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    combine = args[2] if len(args) > 2 else kwargs.get("combine_fn")
    if not (isinstance(combine, tuple) and combine and combine[0] == "helper") or isinstance(x, tuple | list):
        raise Unmodelled("`tl.associative_scan` with this combine function", node)
    kind = _combine_kind(interp.helpers[combine[1]].func)
    if kind is None:
        raise Unmodelled(f"`tl.associative_scan` with the combine function `{combine[1]}`", node)
    kw = {"reverse": kwargs["reverse"]} if "reverse" in kwargs else {}
    if kind in ("cumsum", "cumprod"):
        return reduce_(interp, kind, [x, axis], kw, node)
    v = to_val(x, node)
    ax = int(to_val(axis, node).item())
    fn = np.maximum.accumulate if kind == "cummax" else np.minimum.accumulate
    return derive([v], fn(v.data, axis=ax), v.dtype)


def _combine_kind(fn: ast.FunctionDef) -> str | None:
    params = [a.arg for a in fn.args.args]
    ret = next((st.value for st in fn.body if isinstance(st, ast.Return)), None)
    if len(params) != 2 or ret is None:
        return None
    if isinstance(ret, ast.BinOp) and {getattr(ret.left, "id", None), getattr(ret.right, "id", None)} == set(
        params
    ):
        return {ast.Add: "cumsum", ast.Mult: "cumprod"}.get(type(ret.op))
    if (
        isinstance(ret, ast.Call)
        and len(ret.args) == 2
        and {getattr(a, "id", None) for a in ret.args} == set(params)
    ):
        last = ast.unparse(ret.func).split(".")[-1]
        return {"maximum": "cummax", "minimum": "cummin"}.get(last)
    return None


# ---- methods -------------------------------------------------------------------------------------
def method(
    interp: Interpreter, base: Any, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Any:
    from analyzers.interp import ops_memory

    if isinstance(base, BlockPtr | Descriptor | Ptr) and name in ("load", "store", "atomic_add"):
        return ops_memory.descriptor_method(interp, base, name, args, kwargs, node)
    if isinstance(base, Val):
        if name == "to":
            dtype = _dtype_arg(args[0] if args else kwargs.get("dtype"))
            bitcast = bool(kwargs.get("bitcast") and to_val(kwargs["bitcast"], node).item())
            return cast(interp, base, dtype, node, bitcast)
        if name in ("trans", "permute", "T"):
            return trans(interp, [base, *args], kwargs, node)
        if name in ("reshape", "view"):
            return _reshape(interp, [base, *args], kwargs, node)
        if name == "broadcast_to":
            return _broadcast_to(interp, [base, *args], kwargs, node)
        if name == "expand_dims":
            return _expand_dims(interp, [base, *args], kwargs, node)
        if name in REDUCTIONS:
            return reduce_(interp, name, [base, *args], kwargs, node)
        if name in UNARY_FLOAT:
            return unary_float(interp, name, [base], kwargs, node)
    if isinstance(base, Ptr) and name in ("to",):
        raise Unmodelled("a pointer cast", node)
    raise Unmodelled(f"the method `.{name}()`", node)
