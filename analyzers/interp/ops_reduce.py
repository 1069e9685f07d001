"""Reductions and scans: `tl.sum`, `tl.max`, `tl.argmax`, `tl.reduce`, `tl.cumsum`,
`tl.associative_scan`, ...: the result's tags, undefined lanes reduced (MB004), padding
reduced (DF003), softmax rows (NU003/NU004).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp import softmax as sm
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.facts import FactSink
from argus.analyzers.interp.opdecl import declare, named
from argus.analyzers.interp.ops_core import bc, derive, light_float, np_dtype, to_val
from argus.analyzers.interp.ops_math import minmax
from argus.analyzers.interp.reduce_garbage import (
    SCANS,
    is_reversed,
    neutral_beside_garbage,
    padding_held,
    undefined_lanes_held,
)
from argus.analyzers.interp.values import (
    FullRun,
    Val,
    is_float,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "cumsum", "cumprod", "prod"}




def reduce_(interp: OpContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.<name>(x, axis, keep_dims=...)`: what the reduction computes, after recording what it
    observes of its input: undefined lanes mixed with defined ones (MB004), padding that is not
    the reduction's identity (DF003), a sum of an unshifted exponential (NU003)."""
    if (
        interp.address_only
        and name in ("argmax", "argmin")
        and args
        and is_float(to_val(args[0], node).dtype)
    ):
        raise FullRun()  # an index chosen by floating-point data
    if name in ("max", "min") and kwargs.get("return_indices") is not None:
        if to_val(kwargs["return_indices"], node).item():
            # `tl.max(x, axis, return_indices=True)`: the value and its index, as argmax gives it
            kw = {k: v for k, v in kwargs.items() if not k.startswith("return_indices")}
            return reduce_(interp, name, args, kw, node), reduce_(interp, "arg" + name, args, kw, node)
        kwargs = {k: v for k, v in kwargs.items() if not k.startswith("return_indices")}
    if _of_two_scalars(name, args, kwargs) or _builtin_of_two(name, args, node):
        return _builtin_minmax(interp, args, kwargs, node, name == "max")
    if name == "reduce":
        return _reduce_with_combine(interp, args, kwargs, node)
    x = to_val(args[0], node)
    axis_arg = args[1] if len(args) > 1 else kwargs.get("axis")
    axis = None if axis_arg is None else int(to_val(axis_arg, node).item())
    keep = bool(kwargs.get("keep_dims") and to_val(kwargs["keep_dims"], node).item())
    if axis is not None and axis < 0:
        axis += x.data.ndim
    if interp.address_only and is_float(x.dtype) and name in ("sum", "max", "min", "prod"):
        return light_float(np.sum(x.data, axis=axis, keepdims=keep).shape, x.dtype)
    x = neutral_beside_garbage(x, name, axis)
    spoiled = [
        undefined_lanes_held(interp, x, name, axis, keep, kwargs, node),
        padding_held(interp, x, name, axis, keep, node, is_reversed(kwargs, node)),
    ]
    if name in SCANS:
        out = _scan(x, name, axis, kwargs, node)
    else:
        out = _reduced(x, _reduced_data(x.data, name, axis, keep, node), name, axis, keep)
    for part in spoiled:
        garbage.add(out, part)
    if name in SCANS:
        return out
    if name == "sum" and x.unstable_exp is not None and len(x.unstable_exp) == 2:
        # a sum of unshifted exps: a softmax normalizer once it divides or is logged (ops_core)
        out.unstable_exp = (*x.unstable_exp, node, interp.smap)
    return out


def _builtin_of_two(name: str, args: list[Any], node: ast.AST) -> bool:
    """Python's `max(a, b)` / `min(a, b)` written as a bare name inside a kernel: Triton's code
    generator binds these builtins to `tl.maximum` / `tl.minimum`, elementwise over tiles too
    (`max(0, row_idx + offset)` of a row of indices), never a reduction."""
    return (
        name in ("max", "min")
        and len(args) >= 2
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and all(isinstance(a, Val) for a in args)
    )


def _of_two_scalars(name: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """`max(a, b)` / `min(a, b)` of two scalars (Python's builtins reach the registry by name):
    an elementwise maximum or minimum, not a reduction."""
    if name not in ("max", "min") or len(args) < 2:
        return False
    if name == "max" and "axis" in kwargs:
        return False
    return isinstance(args[0], Val) and isinstance(args[1], Val) and args[0].is_scalar and args[1].is_scalar


def _reduce_with_combine(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.reduce(x, axis, combine_fn)` whose combine function is a jit helper that adds,
    multiplies, or takes the max or min: the reduction it amounts to."""
    combine = args[2] if len(args) > 2 else kwargs.get("combine_fn")
    kind = None
    x = args[0] if args else kwargs.get("input")
    is_helper = isinstance(combine, tuple) and bool(combine) and combine[0] == "helper"
    if is_helper and isinstance(x, tuple | list):
        return _reduce_with_helper(interp, combine[1], x, args, kwargs, node)
    if is_helper:
        kind = {
            "cumsum": "sum",
            "cumprod": "prod",
            "cummax": "max",
            "cummin": "min",
            "cumall": "all",
            "cumany": "any",
        }.get(_combine_kind(interp.helpers[combine[1]].func) or "")
    if kind in ("all", "any") and args and to_val(args[0], node).dtype != "int1":
        kind = None  # `a and b` of integers is not a logical reduction of lanes
    if kind is None and is_helper:
        return _reduce_with_helper(interp, combine[1], x, args, kwargs, node)
    if kind is None:
        raise Unevaluable("`tl.reduce` with a custom combine function", node)
    return reduce_(interp, kind, args[:2], {k: v for k, v in kwargs.items() if k != "combine_fn"}, node)


def _reduce_with_helper(
    interp: OpContext, name: str, x: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Any:
    """`tl.reduce(x, axis, combine)` with any jit combine function (a value and its index, a
    tie-breaking max): the last lane of the scan the helper makes (`scan_with_helper`), with
    the tags that do not vary along the axis, as every reduction keeps."""
    axis_arg = args[1] if len(args) > 1 else kwargs.get("axis")
    if axis_arg is None:
        raise Unevaluable(f"`tl.reduce` over all axes with the combine function `{name}`", node)
    keep = bool(kwargs.get("keep_dims") and to_val(kwargs["keep_dims"], node).item())
    single = not isinstance(x, tuple | list)
    xs = [to_val(v, node) for v in ([x] if single else x)]
    ax = int(to_val(axis_arg, node).item()) % max(xs[0].data.ndim, 1)
    if interp.address_only and any(is_float(v.dtype) for v in xs):
        shape = np.sum(xs[0].data, axis=ax, keepdims=keep).shape
        outs = [light_float(shape, v.dtype) if is_float(v.dtype) else None for v in xs]
        if all(o is not None for o in outs):
            return outs[0] if single else tuple(outs)
    scanned = scan_with_helper(interp, name, xs[0] if single else xs, axis_arg, False, node, "tl.reduce")
    n = xs[0].shape[ax]
    results = []
    for s in [scanned] if single else list(scanned):
        lanewise = derive(xs, s.data, s.dtype)  # the inputs' lane flags, not the scan's
        r = np.take(s.data, [n - 1] if keep else n - 1, axis=ax)
        results.append(_reduced(lanewise, r, "combine", ax, keep))
    return results[0] if single else tuple(results)


def _scan(x: Val, name: str, axis: int | None, kwargs: dict[str, Any], node: ast.AST) -> Val:
    """`tl.cumsum` / `tl.cumprod` along `axis` (0 when not given), reversed on request."""
    with np.errstate(all="ignore"):
        ax = axis if axis is not None else 0
        rev = is_reversed(kwargs, node)
        d = np.flip(x.data, ax) if rev else x.data
        r = (np.cumsum if name == "cumsum" else np.cumprod)(d, axis=ax)
        r = np.flip(r, ax) if rev else r
        out = derive([x], np.asarray(r), x.dtype)
        out.held = garbage.scanned(x, ax, rev) if x.held else ()
        return out


_REDUCERS = {
    "sum": np.sum,
    "max": np.max,
    "min": np.min,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "xor_sum": lambda a, axis=None, keepdims=False: np.bitwise_xor.reduce(
        a.astype(np.int64), axis=axis, keepdims=keepdims
    ),
    "prod": np.prod,
    "all": np.all,
    "any": np.any,
}


def _reduced_data(data: np.ndarray, name: str, axis: int | None, keep: bool, node: ast.AST) -> np.ndarray:
    with np.errstate(all="ignore"):
        fn = _REDUCERS[name]
        if data.size == 0:
            raise Unevaluable("a reduction of an empty tile", node)
        if name in ("argmax", "argmin"):
            r = fn(data, axis=axis)
            if keep and axis is not None:
                r = np.expand_dims(r, axis)
            return r
        return fn(data, axis=axis, keepdims=keep)


def _reduced(x: Val, r: np.ndarray, name: str, axis: int | None, keep: bool) -> Val:
    """The reduction's value: its data `r`, the tags that do not vary along the reduced axis,
    lanes undefined or padding only where the whole reduced slice was, and for a float max the
    token softmax recognizes (softmax.py)."""
    dtype = x.dtype
    if (
        name in ("argmax", "argmin")
        or name == "sum"
        and not is_float(dtype)
        and dtype in ("int1", "int8", "int16")
    ):
        dtype = "int32"
    out = Val(
        np.asarray(r, dtype=np_dtype(dtype)),
        dtype,
        tags=_selected_tags(x, axis, keep) if name == "sum" else _reduced_tags(x, axis, keep),
        index_tags=x.index_tags,
        undef=_all_along(x.undef, x.shape, axis, keep),
        pad=_all_along(x.pad, x.shape, axis, keep),
        lineage=x.lineage,
        scale=x.scale,
        grows=x.grows,
        runtime=x.runtime,
        loaded_from=x.loaded_from,
        unknown=x.unknown,
        nan_site=x.nan_site,
        kcover=x.kcover,
        terms=x.terms,
        held=garbage.reduced(x, axis, keep) if x.held else (),
    )
    if name in ("max",) and is_float(dtype):
        out.maxinfo = sm.MaxToken(x.lineage | (x.maxinfo.covers if x.maxinfo is not None else frozenset()))
        out.lineage = frozenset()
    return out


def _all_along(
    a: np.ndarray | None, shape: tuple[int, ...], axis: int | None, keep: bool
) -> np.ndarray | None:
    """A lane mask reduced with `all` over the reduced axis (everything when `axis` is None)."""
    if a is None:
        return None
    a = bc(a, shape)
    return np.asarray(a.all(axis=axis, keepdims=keep) if axis is not None else np.asarray(a.all()))


def _selected_tags(x: Val, axis: int | None, keep: bool) -> dict[str, np.ndarray]:
    """A sum along an axis where each slice holds at most one lane that is not padding (the
    others zeroed by a constant selector, `tl.sum(y * (1 - mask), 1)` in a compare-and-swap)
    is that lane's value: it keeps that lane's coordinates, the varying ones too. Any other
    sum keeps the tags that do not vary along the axis."""
    if axis is None or x.pad is None or x.data.ndim == 0:
        return _reduced_tags(x, axis, keep)
    real = ~bc(x.pad, x.shape)
    if x.undef is not None:
        real &= ~bc(x.undef, x.shape)
    per_slice = real.sum(axis=axis)
    if int(per_slice.max(initial=0)) > 1:
        return _reduced_tags(x, axis, keep)
    sources = dict(x.tags)
    if x.shape[axis] == 2 and bool((per_slice == 1).all()):
        # a compare-and-swap's pair: the value of one lane moved onto both (see MOVED)
        where = [1] * x.data.ndim
        where[axis] = 2
        sources[tagops.MOVED] = np.arange(2, dtype=np.float64).reshape(where)
    tags: dict[str, np.ndarray] = {}
    for k, t in sources.items():
        picked = np.fmax.reduce(np.where(real, bc(t, x.shape), np.nan), axis=axis)
        tags[k] = np.expand_dims(picked, axis) if keep else picked
    return tags


def _reduced_tags(x: Val, axis: int | None, keep: bool) -> dict[str, np.ndarray]:
    """The tags that stay meaningful after the reduction: those constant along the axis."""
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
    return tags


def associative_scan(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.associative_scan(x, axis, combine)` when `combine` is a jit helper that adds,
    multiplies, or takes the max or min of its two arguments: a cumulative reduction."""
    x = args[0] if args else kwargs.get("input")
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    combine = args[2] if len(args) > 2 else kwargs.get("combine_fn")
    if not (isinstance(combine, tuple) and combine and combine[0] == "helper"):
        raise Unevaluable("`tl.associative_scan` with this combine function", node)
    kind = None if isinstance(x, tuple | list) else _combine_kind(interp.helpers[combine[1]].func)
    if kind is None:
        return scan_with_helper(interp, combine[1], x, axis, is_reversed(kwargs, node), node)
    kw = {"reverse": kwargs["reverse"]} if "reverse" in kwargs else {}
    if kind in ("cumsum", "cumprod"):
        return reduce_(interp, kind, [x, axis], kw, node)
    v = to_val(x, node)
    ax = int(to_val(axis, node).item())
    if kind in ("cumall", "cumany") and v.dtype != "int1":
        raise Unevaluable(f"`tl.associative_scan` with the combine function `{combine[1]}`", node)
    fn = np.maximum.accumulate if kind in ("cummax", "cumany") else np.minimum.accumulate
    return derive([v], fn(v.data, axis=ax), v.dtype)


def scan_with_helper(
    interp: OpContext,
    name: str,
    x: Any,
    axis: Any,
    reverse: bool,
    node: ast.AST,
    what: str = "tl.associative_scan",
) -> Any:
    """`tl.associative_scan(x, axis, combine)` with any jit combine function, of one tile or a
    tuple of tiles: the prefix combines computed by running the helper itself, in log2(n) steps
    over whole tiles (Hillis-Steele: lane i combines with lane i - d for d = 1, 2, 4, ...), which
    Triton's requirement that `combine` be associative makes equal to the sequential scan. The
    helper runs on the values alone (no tags, and what it would record is dropped: its
    comparisons of neighbouring lanes are the scan's, not the kernel's); each result lane then
    carries the tags and flags of that lane of the inputs, as `tl.cumsum` does. A combine that
    is not associative on the tile's own values (`a * 2 + b`) has no order-free result, and
    Triton's tree order is not the checker's to guess: an AR001 names it."""
    single = not isinstance(x, tuple | list)
    xs = [to_val(v, node) for v in ([x] if single else x)]
    ax = int(to_val(axis, node).item())
    shape = xs[0].shape
    if not shape or any(v.shape != shape for v in xs):
        raise Unevaluable("`tl.associative_scan` of tiles of different shapes", node)
    ax = ax % len(shape)
    n = shape[ax]
    data = [np.flip(v.data, ax) if reverse else v.data for v in xs]
    dtypes = [v.dtype for v in xs]
    lane = np.arange(n).reshape([n if i == ax else 1 for i in range(len(shape))])
    saved_sink = interp.sink
    interp.sink = FactSink()  # the combine's own facts are the scan's, not the kernel's
    try:
        if n >= 3 and not _associative_here(interp, name, data, dtypes, ax, node):
            raise Unevaluable(f"`{what}` with the combine function `{name}` (not associative)", node)
        d = 1
        while d < n:
            earlier = [Val(np.roll(a, d, axis=ax), t) for a, t in zip(data, dtypes, strict=True)]
            later = [Val(a, t) for a, t in zip(data, dtypes, strict=True)]
            out = interp.call_helper(name, [*earlier, *later], {}, node)
            outs = [out] if not isinstance(out, tuple | list) else list(out)
            if len(outs) != len(xs) or not all(isinstance(o, Val) for o in outs):
                raise Unevaluable(f"`tl.associative_scan` with the combine function `{name}`", node)
            data = [np.where(lane >= d, bc(o.data, shape), a) for o, a in zip(outs, data, strict=True)]
            dtypes = [o.dtype for o in outs]
            d *= 2
    finally:
        interp.sink = saved_sink
    results = [
        derive(xs, np.asarray(np.flip(a, ax) if reverse else a, dtype=np_dtype(t)), t)
        for a, t in zip(data, dtypes, strict=True)
    ]
    pad, undef = _scanned_flags(xs, shape, ax, reverse)
    held = garbage.elementwise([x.with_(held=garbage.scanned(x, ax, reverse)) for x in xs], shape)
    for r in results:
        r.pad, r.undef, r.held = pad, undef, held
    return results[0] if single else tuple(results)


def _associative_here(
    interp: OpContext, name: str, data: list[np.ndarray], dtypes: list[str], ax: int, node: ast.AST
) -> bool:
    """f(f(a, b), c) == f(a, f(b, c)) on the tile's neighbouring lanes (up to rounding)."""

    def f(left: list[Val], right: list[Val]) -> list[Val]:
        out = interp.call_helper(name, [*left, *right], {}, node)
        outs = [out] if not isinstance(out, tuple | list) else list(out)
        if len(outs) != len(left) or not all(isinstance(o, Val) for o in outs):
            raise Unevaluable(f"the combine function `{name}`", node)
        return outs

    a, b, c = (
        [Val(np.roll(x, -k, axis=ax), t) for x, t in zip(data, dtypes, strict=True)] for k in (0, 1, 2)
    )
    one, two = f(f(a, b), c), f(a, f(b, c))
    with np.errstate(all="ignore"):
        return all(
            np.allclose(
                p.data.astype(np.float64), q.data.astype(np.float64), rtol=1e-5, atol=1e-6, equal_nan=True
            )
            for p, q in zip(one, two, strict=True)
        )


def _scanned_flags(
    xs: list[Val], shape: tuple[int, ...], ax: int, reverse: bool
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """A scan's lane i holds what lanes 0..i combine to: padding only where all of those were
    padding (a running max carries the real prefix into the padded tail), undefined where any
    of them was (garbage spreads forward)."""

    def prefix(masks: list[np.ndarray | None], fn: Any) -> np.ndarray | None:
        present = [bc(m, shape) for m in masks if m is not None]
        if not present:
            return None
        m = present[0] if len(present) == 1 else np.logical_or.reduce(present)
        m = np.flip(m, ax) if reverse else m
        out = fn.accumulate(m, axis=ax)
        return np.flip(out, ax) if reverse else out

    pads = [v.pad for v in xs]
    pad = prefix(pads, np.logical_and) if all(p is not None for p in pads) else None
    return pad, prefix([v.undef for v in xs], np.logical_or)


def _combine_kind(fn: ast.FunctionDef) -> str | None:
    params = [a.arg for a in fn.args.args]
    ret = next((st.value for st in fn.body if isinstance(st, ast.Return)), None)
    if len(params) != 2 or ret is None:
        return None
    if isinstance(ret, ast.BinOp) and {getattr(ret.left, "id", None), getattr(ret.right, "id", None)} == set(
        params
    ):
        return {ast.Add: "cumsum", ast.Mult: "cumprod", ast.BitAnd: "cumall", ast.BitOr: "cumany"}.get(
            type(ret.op)
        )
    if isinstance(ret, ast.BoolOp) and [getattr(v, "id", None) for v in ret.values] in (params, params[::-1]):
        return "cumall" if isinstance(ret.op, ast.And) else "cumany"
    if (
        isinstance(ret, ast.Call)
        and len(ret.args) == 2
        and {getattr(a, "id", None) for a in ret.args} == set(params)
    ):
        last = ast.unparse(ret.func).split(".")[-1]
        return {"maximum": "cummax", "minimum": "cummin"}.get(last)
    return None


def _builtin_minmax(
    interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST, is_max: bool
) -> Any:
    vals = [to_val(a, node) for a in args]
    out = vals[0]
    for v in vals[1:]:
        out = minmax(interp, [out, v], {}, node, is_max)
    return out


OPS = [
    *declare("reductions", {name: named(reduce_, name) for name in sorted(REDUCTIONS)}, method=True),
    *declare("reductions", {"associative_scan": associative_scan}),
]
