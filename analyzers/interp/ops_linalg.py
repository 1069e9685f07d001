"""`tl.dot`: the contraction check (DF001), reduction coverage (DF003), accumulator precision
(NU001), undefined lanes entering the product (MB004) and the tags of the result.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp import softmax as sm
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.contraction_key import contraction_order
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_arith import binop
from argus.analyzers.interp.ops_core import bc, light_float, tag_keys, to_val
from argus.analyzers.interp.pointer_steps import in_flattened_loop, per_iteration_dots
from argus.analyzers.interp.values import LOW_PRECISION, Val, is_float

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


def _base(k: str) -> str:
    return k.rstrip("'")


_varies = tagops.varies


def _lane_ok(v: Val) -> np.ndarray:
    ok = np.ones(v.shape, dtype=bool)
    if v.pad is not None:
        ok &= ~bc(v.pad, v.shape)
    if v.undef is not None:
        ok &= ~bc(v.undef, v.shape)
    return ok


def dot(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """`tl.dot(a, b, acc=None, out_dtype=None)`: the product and its tags, after the checks
    made on its operands: the accumulator's precision (NU001), a's columns against b's rows
    (DF001), undefined lanes entering a product (MB004); its reduction coverage (DF003) travels
    with the result, and the direct-load operands are noted for the pointer-step check (DF002)."""
    a, b = to_val(args[0], node), to_val(args[1], node)
    acc = args[2] if len(args) > 2 else kwargs.get("acc")
    acc = to_val(acc, node) if acc is not None else None
    if a.data.ndim not in (2, 3) or b.data.ndim != a.data.ndim:
        raise Unevaluable(f"tl.dot of shapes {a.shape} and {b.shape}", node)
    if a.shape[-1] != b.shape[-2]:
        raise Unevaluable(f"tl.dot of shapes {a.shape} and {b.shape}", node)
    dtype = _result_dtype(a, acc, kwargs)
    if interp.address_only and is_float(dtype):
        return light_float(a.shape[:-1] + (b.shape[-1],), dtype)
    if (a.dtype in LOW_PRECISION or b.dtype in LOW_PRECISION) and dtype in LOW_PRECISION:
        _report_low_precision(interp, a, b, acc, dtype, node)
    a_ok, b_ok = _lane_ok(a), _lane_ok(b)
    raw_a, flat_a = _profile(a, -1)
    raw_b, flat_b = _profile(b, -2)
    keys_a = _contraction_keys(a, -1, interp, node, raw_a)
    keys_b = _contraction_keys(b, -2, interp, node, raw_b)
    mismatch = _check_contraction(interp, a, b, a_ok, b_ok, node, keys_a, keys_b)
    data, undef, spoiled = _product(interp, a, b, node)
    out = Val(
        data,
        dtype,
        tags=_result_tags(a, b, flat_a, flat_b),
        index_tags=a.index_tags | b.index_tags,
        undef=undef,
        lineage=interp.new_lineage(("dot", a.lineage, b.lineage) if a.lineage and b.lineage else None),
        unknown=a.unknown or b.unknown,
        held=garbage.through_dot(a, b, data.shape) if a.held or b.held else (),
    )
    garbage.add(out, spoiled)
    _carry_operand_marks(out, a, b)
    out.kcover = {"invalid": True} if mismatch else _coverage(interp, a, b, a_ok, b_ok, node, keys_a, keys_b)
    if acc is not None:
        out = _accumulate(interp, acc, out, dtype, node)
    if not mismatch:
        fresh = interp.kernel.cached("per-iteration-dots", lambda: per_iteration_dots(interp.kernel.func))
        _record_operands(interp, a, b, node, acc is not None and id(node) not in fresh)
    return out


def _result_dtype(a: Val, acc: Val | None, kwargs: dict[str, Any]) -> str:
    """`out_dtype` when given, else the accumulator's type (fp32 without one); int32 for
    integer operands."""
    out_name = getattr(kwargs.get("out_dtype"), "name", None)
    if is_float(a.dtype):
        return out_name or (acc.dtype if acc is not None else "fp32")
    return out_name or "int32"


def _report_low_precision(
    interp: OpContext, a: Val, b: Val, acc: Val | None, dtype: str, node: ast.AST
) -> None:
    """NU001: fp16/bf16/fp8 products accumulated in a low-precision type; also at the
    accumulator's initialisation when it was made in that type (not by an earlier dot)."""
    init = acc.init_site if acc is not None else None
    interp.fact(
        "low-precision-dot",
        node,
        dtype=dtype,
        inputs=f"{a.dtype} x {b.dtype}",
        related=[(init[0], "the accumulator's initialisation")] if init else [],
    )
    if init is not None and acc is not None and acc.dtype in LOW_PRECISION and not acc.lineage:
        interp.sink.add(
            Fact(
                "low-precision-acc",
                init[0],
                init[1],
                {
                    "dtype": dtype,
                    "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                    "sizes": interp.launch.describe_sizes(),
                    "inputs": f"{a.dtype} x {b.dtype}",
                },
            )
        )


def _product(
    interp: OpContext, a: Val, b: Val, node: ast.AST
) -> tuple[np.ndarray, np.ndarray | None, garbage.Held | None]:
    """(a @ b in float64, the output lanes left undefined, the MB004 event held on the output
    lanes that undefined lanes spoil). Undefined operand lanes count as zero; an output lane is
    undefined when its whole row of a or column of b was, and spoiled where an undefined lane
    meets defined ones inside its dot product (MB004 once such a lane is kept: garbage.py)."""
    if a.undef is None and b.undef is None:
        with np.errstate(all="ignore"):
            return np.matmul(a.data.astype(np.float64), b.data.astype(np.float64)), None, None
    undef = None
    spoiled = None
    und_a = bc(a.undef, a.shape) if a.undef is not None else np.zeros(a.shape, bool)
    und_b = bc(b.undef, b.shape) if b.undef is not None else np.zeros(b.shape, bool)
    row_und = und_a.any(axis=-1)
    col_und = und_b.any(axis=-2)
    row_all = und_a.all(axis=-1)
    col_all = und_b.all(axis=-2)
    if row_und.any() or col_und.any():
        mixed = (row_und[..., :, None] | col_und[..., None, :]) & ~(
            row_all[..., :, None] | col_all[..., None, :]
        )
        if mixed.any():
            spoiled = garbage.pend(
                interp,
                "undef-reduced",
                node,
                mixed,
                False,
                op="dot",
                lane=np.argwhere(mixed)[0].tolist(),
                consumer="dot",
                load=a.undef_site or b.undef_site,
            )
    with np.errstate(all="ignore"):
        data = np.matmul(
            np.where(und_a, 0.0, a.data.astype(np.float64)),
            np.where(und_b, 0.0, b.data.astype(np.float64)),
        )
    if row_all.any() or col_all.any():
        undef = row_all[..., :, None] | col_all[..., None, :]
    return data, undef, spoiled


def _carry_operand_marks(out: Val, a: Val, b: Val) -> None:
    """What the product inherits of its operands besides tags: padding columns, the softmax
    scale, the terms of a sum it belongs to."""
    if b.pad is not None:
        # a column of b wholly outside its tensor (a key past the end in Q @ K^T) makes that
        # output column padding, which a row reduction must not count unless it is masked.
        # (Rows of a past the end, query rows, only reduce among themselves: not marked.)
        cols = bc(b.pad, b.shape).all(axis=-2)
        if cols.any():
            out.pad = bc(cols[..., None, :], out.shape)
    out.scale = a.scale if a.scale is not None else b.scale
    if isinstance(out.scale, sm.Rescale):
        out.scale = None
    if a.terms is not None or b.terms is not None:
        out.terms = (a.terms or frozenset()) | (b.terms or frozenset())


def _accumulate(interp: OpContext, acc: Val, out: Val, dtype: str, node: ast.AST) -> Val:
    """`acc + a @ b`, typed as the dot's result and keeping the product's lineage and the
    accumulator's initialisation site (for NU001 at the next dot)."""
    summed = binop(interp, ast.Add(), acc, out, node)
    summed.dtype = dtype
    summed.lineage = out.lineage
    summed.init_site = acc.init_site
    summed.data = summed.data.astype(np.float64) if is_float(dtype) else summed.data
    return summed


def _varying(v: Val, axis: int) -> list[str]:
    """Tags of `v` whose coordinate changes along `axis`."""
    return [k for k, arr in v.tags.items() if tagops.varies_right(arr, axis)]


def _profile(v: Val, axis: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """The tags of `v` that vary along the negative `axis`, and the others collapsed there
    (one reduction pass serves both questions)."""
    varying: list[str] = []
    flat: dict[str, np.ndarray] = {}
    for k, arr in v.tags.items():
        if arr.ndim < -axis or arr.shape[axis] <= 1:
            flat[k] = arr
        elif arr.strides[axis] == 0:
            flat[k] = np.expand_dims(np.take(arr, 0, axis=axis), axis)
        else:
            mx = np.fmax.reduce(arr, axis=axis, keepdims=True)
            if np.count_nonzero(mx > np.fmin.reduce(arr, axis=axis, keepdims=True)):
                varying.append(k)
            else:
                flat[k] = mx
    return varying, flat


def _contraction_keys(
    v: Val,
    axis: int,
    interp: OpContext | None = None,
    node: ast.AST | None = None,
    varying: list[str] | None = None,
) -> list[str]:
    """Tags that vary along the contraction axis. A tile with a single valid column (the last
    K tile) shows no variation, so the keys seen at the same dot before are reused."""
    keys = contraction_order(varying if varying is not None else _varying(v, axis), v.index_tags)
    if interp is not None and node is not None:
        memo = interp.dot_keys.setdefault((id(node), axis), [])
        if keys:
            memo[:] = keys
        elif memo:
            keys = [k for k in memo if k in v.tags]
    return keys


class _Lanes(NamedTuple):
    """The lanes a contraction check compares: a's first valid row `ia`, b's first valid column
    `ib` (batch index first for 3-D operands), and the contraction indices valid in both."""

    ia: tuple[int, ...]
    ib: tuple[int, ...]
    kvalid: np.ndarray


def _check_contraction(
    interp: OpContext,
    a: Val,
    b: Val,
    a_ok: np.ndarray,
    b_ok: np.ndarray,
    node: ast.AST,
    ka: list[str],
    kb: list[str],
) -> bool:
    """DF001: a's column j and b's row j carry the same contraction coordinate. True on a mismatch.

    The tags that vary along the contraction are compared by name (a symbol the launch names,
    `K`): each common one must agree lane by lane. With no name in common, a dimension the
    launch never names is compared by its coordinates; otherwise the axes themselves differ."""
    if a.unknown or b.unknown:
        return False
    if not ka or not kb:
        return False
    lanes = _reference_lanes(a, b, a_ok, b_ok)
    if lanes is None:
        return False
    common = {_base(k) for k in ka} & {_base(k) for k in kb}
    anon_a = [k for k in ka if "." in _base(k)]
    anon_b = [k for k in kb if "." in _base(k)]
    if not common and (anon_a or anon_b):
        # a dimension the launch never names: compare the coordinates, not the names
        ka_k = anon_a[0] if anon_a else ka[0]
        kb_k = anon_b[0] if anon_b else kb[0]
        return _coordinates_differ(interp, node, a, b, lanes, ka_k, kb_k, _base(ka_k), shifted_ok=True)
    if not common:
        j = int(np.argmax(lanes.kvalid))
        interp.fact(
            "dot-mismatch",
            node,
            kind="axis",
            a_coord={k: _int(bc(a.tags[k], a.shape)[lanes.ia][j]) for k in ka},
            b_coord={k: _int(_b_row(b, lanes.ib, k)[j]) for k in kb},
            j=j,
        )
        return True
    for base in sorted(common):
        ka_k = next(k for k in ka if _base(k) == base)
        kb_k = next(k for k in kb if _base(k) == base)
        if _coordinates_differ(interp, node, a, b, lanes, ka_k, kb_k, base):
            return True
    return False


def _reference_lanes(a: Val, b: Val, a_ok: np.ndarray, b_ok: np.ndarray) -> _Lanes | None:
    """The row of a and the column of b to compare, or None when no contraction index is valid
    in both (nothing to compare)."""
    rows = a_ok.any(axis=-1)
    cols = b_ok.any(axis=-2)
    if not rows.any() or not cols.any():
        return None
    ia = tuple(np.argwhere(rows)[0])
    ib = tuple(np.argwhere(cols)[0])
    kvalid = a_ok[ia] & (b_ok[..., ib[-1]] if b.shape[-1] else True)
    if b.data.ndim == 3:
        kvalid = a_ok[ia] & b_ok[ib[0], :, ib[-1]]
    if not kvalid.any():
        return None
    return _Lanes(ia, ib, kvalid)


def _coordinates_differ(
    interp: OpContext,
    node: ast.AST,
    a: Val,
    b: Val,
    lanes: _Lanes,
    ka_k: str,
    kb_k: str,
    symbol: str,
    shifted_ok: bool = False,
) -> bool:
    """Compare a's column coordinates with b's row coordinates for one pair of tags; record
    the first lane that differs. `shifted_ok`: a constant difference is accepted (a dimension
    the launch never names may fold outer dimensions the model does not see into its
    coordinate)."""
    ia, ib, kvalid = lanes
    va = bc(a.tags[ka_k], a.shape)[ia]
    vb = _b_row(b, ib, kb_k)
    diff = kvalid & tagops.differ(va, vb)
    if not diff.any():
        return False
    if shifted_ok:
        both = kvalid & ~np.isnan(va) & ~np.isnan(vb)
        gaps = (va - vb)[both]
        if gaps.size and bool((gaps == gaps[0]).all()):
            return False
    j = int(np.argmax(diff))
    interp.fact(
        "dot-mismatch",
        node,
        kind="value",
        symbol=symbol,
        j=j,
        a_value=int(va[j]),
        b_value=int(vb[j]),
        a_coord={k: _int(bc(a.tags[k], a.shape)[ia][j]) for k in a.tags},
        b_coord={k: _int(_b_row(b, ib, k)[j]) for k in b.tags},
    )
    return True


def _int(x: float) -> int | None:
    return None if np.isnan(x) else int(x)


def _b_row(b: Val, ib: tuple[int, ...], k: str) -> np.ndarray:
    arr = bc(b.tags[k], b.shape)
    if b.data.ndim == 3:
        return arr[ib[0], :, ib[-1]]
    return arr[:, ib[-1]]


def _result_tags(
    a: Val, b: Val, flat_a: dict[str, np.ndarray], flat_b: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Row tags from a (constant along the contraction), column tags from b, given collapsed
    along it by `_profile` (tags that vary there are dropped). Tags are kept unbroadcast until
    the end: a tag with fewer dimensions lines up with the tile's last ones."""
    tags: dict[str, np.ndarray] = dict(flat_a)
    for k, row in flat_b.items():
        key = k
        while key in tags:
            cur = tags[key]
            if not tagops.varies_right(cur, -2) and not tagops.varies_right(row, -1):
                m = tagops.merge(cur, row)  # (broadcasts the two)
                if m is not None:
                    tags[key] = m
                    break
            key += "'"
        else:
            tags[key] = row
    shape = a.shape[:-1] + (b.shape[-1],)
    return {k: bc(v, shape) for k, v in tags.items()}


def _coverage(
    interp: OpContext,
    a: Val,
    b: Val,
    a_ok: np.ndarray,
    b_ok: np.ndarray,
    node: ast.AST,
    ka: list[str],
    kb: list[str] | None = None,
) -> Any:
    """Which indices of the contraction extent this product received (for DF003). Every index
    exactly once is asked only of a product of two direct loads that contract the same named
    dimension (a GEMM); a chunk-local product (`_chunk_local`) is judged for double counts only."""
    if not ka and a.data.ndim == 2 and int(np.count_nonzero(a_ok.any(axis=0))) == 1:
        # one valid contraction lane and no earlier tile of this dot: which coordinate it
        # contracts is not known (the first tile of a loop that walks backwards), so the
        # reduction it enters is not judged (cause K23b)
        return {"invalid": True}
    if not ka or a.data.ndim != 2:
        return None
    if interp.loops and in_flattened_loop(interp, node):  # type: ignore[arg-type]
        return {"invalid": True}  # one loop over the window and the channels: counts multiply
    k = ka[0]
    size = interp.symbol_sizes.get(_base(k))
    if not size:
        return None
    kvals = bc(a.tags[k], a.shape)
    kvalid = a_ok.any(axis=0) & b_ok.any(axis=1)
    row = int(np.argmax(a_ok.any(axis=1))) if a_ok.any() else 0
    ks = kvals[row][kvalid]
    ks = ks[~np.isnan(ks)].astype(np.int64)
    ks = ks[(ks >= 0) & (ks < size)]
    counts = np.bincount(ks, minlength=size).astype(np.int64)
    loop = interp.loops[-1].node if interp.loops else node
    site = interp.call_stack[0] if interp.call_stack else (loop, interp.smap)
    direct = (
        a.load_node is not None
        and b.load_node is not None
        and id(a.load_node) not in interp.oob_nodes
        and id(b.load_node) not in interp.oob_nodes
        and not _chunk_local(interp, a, b, k, kb)
    )
    return {"counts": counts, "key": _base(k), "loop": site, "direct": direct}


def _chunk_local(interp: OpContext, a: Val, b: Val, k: str, kb: list[str] | None) -> bool:
    """A product of a chunk-local `[BT, BT]` matrix (`A[..., T, BT]`, positions inside one chunk
    along a dimension the launcher never names) with the chunk's rows: its contraction pairs
    the chunk's own positions, so it covers that chunk, not the whole extent, and a missing
    index says nothing (K29). Seen as a's contraction named unlike b's (`_t` against T), or a
    square operand with an axis along such an unnamed dimension held whole in the tile."""
    if kb is not None and kb and _base(k) not in {_base(x) for x in kb}:
        return True
    for v in (a, b):
        if v.data.ndim != 2 or v.shape[0] != v.shape[1]:
            continue
        for key, arr in v.tags.items():
            sym = _base(key)
            if not sym.startswith("_") or interp.symbol_sizes.get(sym) != v.shape[0]:
                continue
            full = bc(arr, v.shape)
            if _varies(full, 0) or _varies(full, 1):
                return True
    return False


def _record_operands(interp: OpContext, a: Val, b: Val, node: ast.AST, accumulates: bool) -> None:
    """Remember direct-load operands of an accumulating dot for the pointer-step check (DF002)."""
    if not interp.loops:
        return
    acc_loop = accumulates or interp.accumulating_dot(node)
    if not acc_loop:
        return
    for v, axis, side in ((a, -1, "a"), (b, -2, "b")):
        if v.load_node is None or v.data.ndim != 2:
            continue
        ks = _contraction_keys(v, axis)
        t = interp.tensor_named(v.src)
        if t is None or not ks:
            continue
        key = next((k for k in ks if _base(k) in t.symbols), None)
        if key is None:
            continue

        keys = tag_keys(t)
        if key not in keys:
            continue
        cdim = keys.index(key)
        step = v.shape[axis]
        upd = interp.pointer_update_for(v.load_node)
        if upd is None and interp.loops:
            key = (id(interp.loops[-1].node), id(v.load_node))
            memo = interp.kernel.cached("static_updates", dict)
            if key not in memo:
                memo[key] = _static_update(interp.loops[-1].node, v.load_node)
            upd = memo[key]
        interp.dot_operands.append((node, interp.smap, (v.load_node,), cdim, side, step, upd))


def _static_update(loop: ast.AST, load: ast.AST) -> ast.AST | None:
    """The last statement of the loop body that reassigns the load's pointer variable."""
    arg = load.args[0] if isinstance(load, ast.Call) and load.args else None
    if not isinstance(arg, ast.Name):
        return None
    found = None
    for st in ast.walk(loop):
        if (
            isinstance(st, ast.AugAssign)
            and isinstance(st.target, ast.Name)
            and st.target.id == arg.id
            or isinstance(st, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == arg.id for t in st.targets)
        ):
            found = st
    return found


OPS = declare("linear algebra", {"dot": dot})
