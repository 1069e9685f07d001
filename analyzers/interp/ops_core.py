"""What every op module shares: conversions to `Val`, dtype promotion, broadcasting of
masks and tags, derivation of a result's tags from its operands, and the stand-in float of an
address-only run.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage, tag_chains
from argus.analyzers.interp.budget import check_elements
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.values import (
    LOW_PRECISION,
    DType,
    Ptr,
    TensorInfo,
    Val,
    is_float,
    norm_dtype,
    scalar,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


class Retype(Exception):
    """A pointer parameter's contents turned out to be integers (used as an index): rerun."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def to_val(x: Any, node: ast.AST) -> Val:
    if isinstance(x, Val):
        return x
    if isinstance(x, bool | int | float | np.integer | np.floating):
        return scalar(x, constexpr=True)
    raise Unevaluable(f"a value of kind {type(x).__name__} where a number or tensor was expected", node)


def np_dtype(dtype: str) -> Any:
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
        return db if _scalar_joins(da, db) else int_promote(da, db)
    if b.constexpr and b.is_scalar and not a.constexpr:
        if is_float(db) and not is_float(da):
            return "fp32"
        return da if _scalar_joins(db, da) else int_promote(da, db)
    if is_float(da) or is_float(db):
        order = ["fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "bf16", "fp16", "fp32", "fp64"]
        fa = da if is_float(da) else None
        fb = db if is_float(db) else None
        if fa and fb and fa != fb:
            if {fa, fb} <= LOW_PRECISION:
                return "fp32"
            return max(fa, fb, key=order.index)
        return fa or fb or "fp32"
    return int_promote(da, db)


def _scalar_joins(scalar_dtype: str, tensor_dtype: str) -> bool:
    """Whether a Python number (or constexpr) beside a tensor takes the tensor's type (Triton's
    semantics page: a scalar of a lower or equal kind, bool < integers < floats, does not take
    part in the promotion, so `32768 | x` of a uint16 `x` stays uint16); an integer beside a
    bool tensor does."""
    if is_float(tensor_dtype):
        return True
    return _kind(scalar_dtype) <= _kind(tensor_dtype)


def _kind(dtype: str) -> int:
    if is_float(dtype):
        return 2
    return 0 if dtype == "int1" else 1


_INT_PROMOTED: dict[tuple[str, str], str] = {}  # int_promote's answers (a few dtype pairs)


def int_promote(da: str, db: str) -> str:
    """`_int_promote(da, db)`, remembered: a function of the two names alone, asked by nearly
    every integer operation (program ids, offsets, strides), and it reads digits off both names."""
    key = (da, db)
    out = _INT_PROMOTED.get(key)
    if out is None:
        out = _INT_PROMOTED[key] = _int_promote(da, db)
    return out


def _int_promote(da: str, db: str) -> str:
    """Triton's integer promotion (`integer_promote_impl`, C's usual arithmetic conversions):
    of two signed or two unsigned types the wider wins; of mixed signedness the unsigned one
    wins where it is at least as wide. `int1` is unsigned and one bit wide there, so `int16 >>
    int16` stays int16 and `uint64 | uint64` stays uint64 (flag-gems' radix sort and philox
    bit pasting bitcast those results to a type of the same width)."""
    wa, wb = _int_width(da), _int_width(db)
    ua, ub = da == "int1" or da.startswith("uint"), db == "int1" or db.startswith("uint")
    if ua == ub:
        return da if wa > wb else db
    if ua:
        return da if wa >= wb else db
    return db if wb >= wa else da


def _int_width(dtype: str) -> int:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return int(digits) if digits else 32


def bshape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        out = _broadcast(shapes)
        if out is None:
            out = tuple(np.broadcast_shapes(*shapes))
    except ValueError as e:
        raise Unevaluable(f"incompatible tile shapes {' and '.join(map(str, shapes))}") from e
    check_elements(out)
    return out


def _broadcast(shapes: tuple[tuple[int, ...], ...]) -> tuple[int, ...] | None:
    """`np.broadcast_shapes` for tuples of non-negative Python ints (every tile's shape), without
    the arrays it builds to ask numpy (most of a pointer add's time); None for anything else,
    which numpy answers. Right-aligned, equal extents or a 1 on either side; ValueError otherwise,
    as numpy raises (a 0 meets only a 0 or a 1, as in numpy)."""
    if not shapes:
        return None
    n = 0
    for s in shapes:
        if type(s) is not tuple:
            return None
        n = max(n, len(s))
    out = [1] * n
    for s in shapes:
        off = n - len(s)
        for i, d in enumerate(s):
            if type(d) is not int or d < 0:
                return None
            cur = out[off + i]
            if d == cur or d == 1:
                continue
            if cur != 1:
                raise ValueError(f"shape mismatch: {shapes}")
            out[off + i] = d
    return tuple(out)


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


def or_masks(a: np.ndarray | None, b: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if a is None and b is None:
        return None
    if a is None:
        return bc(b, shape)
    if b is None:
        return bc(a, shape)
    return np.logical_or(bc(a, shape), bc(b, shape))


def merge_tags(vals: list[Val], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The operands' tags on the result: each joins its key's chain (`interp/tag_chains.py`)."""
    return tag_chains.merge_tags(vals, shape, bc)


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
            pad = or_masks(pad, v.pad, shape)
    for v in bcast:
        if pad is not None or not lane_ops:
            pad = or_masks(pad, v.pad, shape)
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


def derive_with_constant(a: Val, b: Val, data: np.ndarray, dtype: str) -> Val | None:
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
        held=v.held,
    )


def nan_lanes(v: Val) -> np.ndarray | None:
    """The lanes of `v` whose NaN its `nan_site` made (-inf - -inf, 0 / 0), or None for "any
    NaN lane of v" (the lanes were lost through a reshape or a reduction's broadcast)."""
    site = v.nan_site
    lanes = site[2] if site is not None and len(site) > 2 else None
    return lanes if lanes is not None and lanes.shape == v.data.shape else None


def follow_nan(v: Val, data: np.ndarray) -> tuple[Any, ...]:
    """`v`'s NaN site on a value computed lane by lane from it: the lanes that hold the site's
    NaN are those that still hold a NaN where v's NaN lanes lie. A NaN a lane gets otherwise (the
    log of a negative number) is not the site's."""
    site = v.nan_site
    lanes = nan_lanes(v)
    if lanes is None:
        return (site[0], site[1], None)
    with np.errstate(all="ignore"):
        return (site[0], site[1], bc(lanes, data.shape) & np.isnan(data))


def derive(vals: list[Val], data: np.ndarray, dtype: str, **kw: Any) -> Val:
    """A value computed elementwise from `vals`: flags and tags merge, provenance unions."""
    shape = data.shape
    undef = None
    any_tags = any_pad = grows = runtime = False
    constexpr = True
    index_tags = lineage = loaded_from = frozenset()
    overflow_site = nan_site = unstable_exp = unknown = undef_site = None
    nan_from: Val | None = None
    srcs = set()
    # one pass over the operands (this runs for every elementwise operation)
    for v in vals:
        if v.undef is not None:
            undef = or_masks(undef, v.undef, shape)
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
        if nan_site is None and v.nan_site is not None:
            nan_site, nan_from = v.nan_site, v
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
        nan_site=nan_site if nan_from is None else follow_nan(nan_from, data),
        unstable_exp=unstable_exp,
        unknown=unknown,
        undef_site=undef_site,
        terms=_union_terms(vals),
        held=garbage.elementwise(vals, shape),
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
        held=garbage.mapped(v, fn) if v.held else (),
    )
    for k, x in kw.items():
        setattr(out, k, x)
    return out


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))
    return q + fix


def trunc_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    return a - trunc_div(a, b) * b


LIGHT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def light_float(shape: tuple[int, ...], dtype: str) -> Val:
    """Floating-point data in an address-only program: the right shape and type, no tags or
    checks (its values never reach an address, a mask or a branch, or the program reruns)."""
    return Val(np.zeros(shape), dtype)


def probe_fact(interp: OpContext, kind: str, node: ast.AST, smap: Any, related: list[Any]) -> Any:
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


def unstable_normalizer(interp: OpContext, v: Val) -> None:
    """`v` divides a value or is logged: if it is a sum of exps taken without a max subtracted,
    it normalizes a softmax, which is what NU003 is about. A sum of such exps used otherwise (a
    loss over `exp(log_p)`, a decay factor) normalizes nothing and is not judged."""
    site = v.unstable_exp
    if site is None or len(site) != 4:
        return
    enode, esmap, sum_node, sum_smap = site
    interp.sink.add(
        probe_fact(interp, "unstable-exp", enode, esmap, [(sum_node, sum_smap, "the sum that normalizes it")])
    )


def dtype_arg(x: Any, default: str = "fp32") -> str:
    if isinstance(x, DType):
        return x.name
    if isinstance(x, str):
        return norm_dtype(x)
    return default


def tag_keys(t: TensorInfo) -> list[str]:
    """One tag key per dimension; a symbol repeated in one tensor gets primes (S, S')."""
    keys: list[str] = []
    for s in t.symbols:
        k = s
        while k in keys:
            k += "'"
        keys.append(k)
    return keys
