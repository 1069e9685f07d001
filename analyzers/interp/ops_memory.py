"""Memory operations: pointer arithmetic, loads, stores, atomics, block pointers, descriptors.

Every lane a memory operation touches with its mask on is located in its tensor (coordinates
from the probe's strides, gaps included), so an out-of-bounds lane is an exact witness. Loads
tag their elements; stores compare the value's tags with the destination, log who wrote what
(coverage and races) and check undefined or NaN lanes.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzers.errors import Unevaluable
from analyzers.interp import tags as tagops
from analyzers.interp.coverage import record_coverage
from analyzers.interp.facts import Fact
from analyzers.interp.opdecl import declare
from analyzers.interp.ops_core import Retype, bc, bshape, light_float, tag_keys, to_val
from analyzers.interp.values import BlockPtr, Descriptor, FullRun, Ptr, TensorInfo, Val, is_float

if TYPE_CHECKING:
    from analyzers.interp.interpreter import Interpreter


def pointer_arith(interp: Interpreter, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
    if isinstance(a, Ptr) and isinstance(b, Ptr):
        if isinstance(op, ast.Sub):
            return Val(a.offsets - b.offsets, "int64")
        raise Unevaluable("adding two pointers", node)
    if not isinstance(op, ast.Add | ast.Sub):
        raise Unevaluable(f"pointer arithmetic with {type(op).__name__}", node)
    ptr, v = (a, b) if isinstance(a, Ptr) else (b, a)
    if isinstance(op, ast.Sub) and not isinstance(a, Ptr):
        raise Unevaluable("an integer minus a pointer", node)
    v = to_val(v, node)
    if is_float(v.dtype):
        if v.src:
            raise Retype(v.src)
        if interp.address_only:
            raise FullRun()
        raise Unevaluable("a floating-point pointer offset", node)
    delta = v.data.astype(np.int64)
    if isinstance(op, ast.Sub):
        delta = -delta
    shape = bshape(ptr.offsets.shape, delta.shape)
    offsets = bc(ptr.offsets, shape) + bc(delta, shape)
    tags = {k: bc(t, shape) for k, t in ptr.tags.items()}
    for k, t in v.tags.items():
        tags.setdefault(k, bc(t, shape))
    index_site = ptr.index_site
    if v.loaded_from and index_site is None:
        index_site = (node, interp.smap)
    overflow = ptr.overflow_site or v.overflow_site
    return Ptr(
        ptr.tensor,
        offsets,
        tags,
        ptr.index_tags | frozenset(v.tags),
        ptr.loaded_from | v.loaded_from,
        index_site,
        overflow,
        ptr.unknown or v.unknown,
    )


def _mask(
    interp: Interpreter, mask: Any, shape: tuple[int, ...], node: ast.AST
) -> tuple[np.ndarray, Val | None]:
    if mask is None:
        return np.ones(shape, dtype=bool), None
    m = to_val(mask, node)
    if m.unknown:
        raise Unevaluable(f"a mask computed from {m.unknown}", node)
    return bc(m.data.astype(bool), bshape(shape, m.shape)), m


def _check_common(
    interp: Interpreter, ptr: Ptr, mask_val: Val | None, active: np.ndarray, node: ast.AST, kind: str
) -> None:
    """MB003 (an int32 product in the address) and MB005 (an unchecked loaded index)."""
    if ptr.overflow_site is not None and active.any():
        onode, osmap, side, operands = ptr.overflow_site
        interp.sink.add(
            Fact(
                "int32-offset",
                onode,
                osmap,
                {
                    "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                    "sizes": interp.launch.describe_sizes(),
                    "tensor": ptr.tensor.name,
                    "expr": ast.unparse(onode),
                    **operands,
                    "grows_side": side,
                },
                [(node, interp.smap, f"the {kind} that uses the offset")],
            )
        )
    needed = {s for s in ptr.loaded_from if interp.site_tensor.get(s) not in interp.trusted_tensors}
    if needed and active.any():
        covered = set(interp.branch_checked)
        if mask_val is not None:
            covered |= set(mask_val.checked)
        missing = needed - covered
        if missing and ptr.index_site is not None:
            inode, ismap = ptr.index_site
            src = interp.site_name.get(next(iter(missing)), "memory")
            pol = interp.scan.policies.get(src)
            interp.sink.add(
                Fact(
                    "unchecked-index",
                    inode,
                    ismap,
                    {
                        "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                        "sizes": interp.launch.describe_sizes(),
                        "tensor": ptr.tensor.name,
                        "index_from": src,
                        "lower_only": bool(pol and pol.lower_only),
                        "window_start": pol.window_start if pol else None,
                    },
                    [(node, interp.smap, f"the {kind} it addresses")],
                )
            )


def _oob(
    interp: Interpreter,
    t: TensorInfo,
    offsets: np.ndarray,
    active: np.ndarray,
    node: ast.AST,
    kind: str,
    ptr: Ptr | None = None,
) -> np.ndarray:
    coords, valid = interp.unravel(t, offsets)
    if not t.sized:
        return valid | True
    if ptr is not None and ptr.loaded_from and not _contract_contents(interp, ptr):
        # rows picked by loaded indices: their range is the routing contract's (MB005 judges
        # whether the kernel checks them); synthesized contents cannot stand for it, unless
        # they are the contract itself (a permutation of ids, a partition into groups)
        return valid
    bad = active & ~valid
    if bad.any():
        interp.oob_nodes.add(id(node))
        lane = tuple(int(i) for i in np.argwhere(bad)[0])
        off = int(offsets[lane])
        interp.fact(
            kind,
            node,
            tensor=t.name,
            lane=list(lane),
            offset=off,
            shape=list(t.shape),
            symbols=list(t.symbols),
            coords=_naive_coords(t, off),
            lanes=int(bad.sum()),
        )
    return valid


def _contract_contents(interp: Interpreter, ptr: Ptr) -> bool:
    """Every loaded index behind this pointer comes from a table synthesized to its contract
    (sorted ids: each valid id once; group offsets: a partition of the rows)."""
    return {interp.site_tensor.get(s) for s in ptr.loaded_from} <= interp.contract_tables


def _partitioned(interp: Interpreter, ptr: Ptr) -> bool:
    return any(interp.site_tensor.get(s) in interp.partition_tensors for s in ptr.loaded_from)


def _naive_coords(t: TensorInfo, off: int) -> list[int]:
    """Coordinates an out-of-bounds offset would have if the rows went on (for the witness)."""
    order = sorted(range(len(t.shape)), key=lambda i: (-t.strides[i], -i))
    rest = off
    out = [0] * len(t.shape)
    for d in order:
        st = max(t.strides[d], 1)
        out[d] = rest // st if d != order[-1] or st != 1 else rest
        rest -= out[d] * st
    return out


def load(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    ptr = args[0] if args else kwargs.get("pointer")
    mask = args[1] if len(args) > 1 else kwargs.get("mask")
    other = args[2] if len(args) > 2 else kwargs.get("other")
    if isinstance(ptr, BlockPtr):
        return block_load(interp, ptr, kwargs, node)
    if not isinstance(ptr, Ptr):
        raise Unevaluable(f"a load from {type(ptr).__name__}", node)
    if ptr.unknown:
        raise Unevaluable(f"a load through a pointer computed from {ptr.unknown}", node)
    shape = ptr.offsets.shape
    active, mval = _mask(interp, mask, shape, node)
    shape = active.shape
    offsets = bc(ptr.offsets, shape)
    t = ptr.tensor
    interp.mem.loaded.add(t.index)
    valid = _oob(interp, t, offsets, active, node, "oob-load", ptr)
    _check_common(interp, ptr, mval, active, node, "load")
    return _make_loaded(interp, ptr, t, offsets, active, valid, other, node, shape)


def _make_loaded(
    interp: Interpreter,
    ptr: Ptr | None,
    t: TensorInfo,
    offsets: np.ndarray,
    active: np.ndarray,
    valid: np.ndarray,
    other: Any,
    node: ast.AST,
    shape: tuple[int, ...],
) -> Val:
    is_int = t.dtype.startswith("int") or t.name in interp.int_tensors
    dtype = ("int32" if not t.dtype.startswith("int") else t.dtype) if is_int else interp.float_dtype_of(t)
    if interp.address_only and not is_int:
        # its bounds were checked by the caller; the values are a stand-in (see interpreter.py)
        return light_float(shape, dtype)
    ok = active & valid
    contents = interp.contents(t, offsets)
    if other is not None:
        ov = to_val(other, node)
        fill = bc(ov.data, shape)
        undef = None
        pad = ~active if not active.all() else None
    else:
        fill = np.zeros(shape)
        undef = ~active if not active.all() else None
        pad = None
    data = np.where(ok, contents, fill)
    data = np.asarray(data, dtype=np.int64 if is_int else np.float64)
    coords, _ = interp.unravel(t, offsets)
    keys = tag_keys(t)
    # a tensor of unknown shape has no coordinates to tag with, only flat offsets
    tags = {k: np.where(ok, coords[..., d], np.nan) for d, k in enumerate(keys)} if t.sized else {}
    index_tags = frozenset()
    if ptr is not None:
        for k, arr in ptr.tags.items():
            if k not in tags:
                tags[k] = bc(arr, shape)
        index_tags = ptr.index_tags
    out = Val(
        data,
        dtype,
        tags=tags,
        index_tags=index_tags,
        undef=undef,
        pad=pad,
        src=t.name,
        load_node=node,
        undef_site=(node, interp.smap) if undef is not None else None,
    )
    if is_int:
        out.grows = True
        site = id(node)
        interp.site_tensor[site] = t.index
        interp.site_name[site] = t.name
        out.loaded_from = frozenset({site})
        if offsets.size == 1:
            # prefix sums (`cu_seqlens[b]`, `cu_seqlens[b + 1]`): two loads at neighbouring
            # offsets from two different places bound the program's work; they are trusted
            o = int(offsets.reshape(-1)[0])
            seen = interp.scalar_loads.setdefault(t.index, {})
            if any(seen.get(o + d, site) != site for d in (-1, 1)):
                interp.trusted_tensors.add(t.index)
            seen.setdefault(o, site)
        pol = interp.scan.policies.get(t.name)
        if pol is not None and pol.work_bound and pol.upper is None:
            interp.trusted_tensors.add(t.index)
    else:
        out.lineage = interp.new_lineage()
    interp.record_load_step(node, offsets, t, active)
    return out


def store(
    interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST, atomic: str | None = None
) -> Any:
    ptr = args[0] if args else kwargs.get("pointer")
    value = args[1] if len(args) > 1 else kwargs.get("value", kwargs.get("val"))
    mask = args[2] if len(args) > 2 else kwargs.get("mask")
    if isinstance(ptr, BlockPtr):
        return block_store(interp, ptr, value, kwargs, node)
    if not isinstance(ptr, Ptr):
        raise Unevaluable(f"a store to {type(ptr).__name__}", node)
    if ptr.unknown:
        raise Unevaluable(f"a store through a pointer computed from {ptr.unknown}", node)
    v = to_val(value, node)
    shape = bshape(ptr.offsets.shape, v.shape)
    active, mval = _mask(interp, mask, shape, node)
    shape = active.shape
    offsets = bc(ptr.offsets, shape)
    t = ptr.tensor
    valid = _oob(interp, t, offsets, active, node, "oob-store", ptr)
    _check_common(interp, ptr, mval, active, node, "atomic" if atomic else "store")
    coords, _ = interp.unravel(t, offsets)
    record_store(interp, t, offsets, active & valid, v, coords, node, shape, atomic, ptr)
    if atomic:
        return Val(np.zeros(shape), v.dtype)
    return None


def record_store(
    interp: Interpreter,
    t: TensorInfo,
    offsets: np.ndarray,
    ok: np.ndarray,
    v: Val,
    coords: np.ndarray,
    node: ast.AST,
    shape: tuple[int, ...],
    atomic: str | None,
    ptr: Ptr | None,
) -> None:
    vshape = bc(v.data, shape)
    # undefined lanes stored (MB004) and NaN made by a fully masked row (NU004)
    if interp.address_only and is_float(v.dtype):
        pass  # the value is a stand-in: only where it goes is checked
    elif v.undef is not None:
        und = bc(v.undef, shape) & ok
        if und.any():
            lane = np.argwhere(und)[0].tolist()
            interp.fact("undef-reduced", node, op="store", lane=lane, consumer="store", load=v.undef_site)
    if v.nan_site is not None and is_float(v.dtype):
        nan = np.isnan(vshape) & ok
        if v.undef is not None:
            nan &= ~bc(v.undef, shape)
        if nan.any():
            snode, ssmap = v.nan_site
            lane = np.argwhere(nan)[0].tolist()
            interp.sink.add(
                Fact(
                    "masked-row-nan",
                    snode,
                    ssmap,
                    {
                        "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                        "sizes": interp.launch.describe_sizes(),
                        "tensor": t.name,
                        "element": coords[tuple(lane)].tolist(),
                    },
                    [(node, interp.smap, "the store that writes the NaN")],
                )
            )
    if not (interp.address_only and is_float(v.dtype)):
        _check_store_tags(interp, t, coords, ok, v, node, shape, ptr)
    # who wrote what: coverage (GR001) and races (GR002); scatters through loaded indices
    # depend on the routing contents, which are synthesized: judged only where the contents
    # are a permutation of the valid ids (sorted token ids padded past the valid count)
    if ptr is not None and ptr.loaded_from and not _contract_contents(interp, ptr):
        return
    if ptr is not None and ptr.loaded_from and _partitioned(interp, ptr):
        # rows picked through group offsets: whether the grid reaches every row depends on how
        # the launcher's bound (`max_seqlen`) relates to the offsets, which it does not state
        interp.mem.coverage_unjudged.add(t.index)
    if not ok.any():
        interp.mem.last_store.setdefault(t.index, (node, interp.smap))
        return
    n = max(t.extent, 1)
    table = interp.mem.atomic if atomic else interp.mem.writer
    writer = table.setdefault(t.index, np.full(n, -1, dtype=np.int64))
    plain = interp.mem.writer.setdefault(t.index, np.full(n, -1, dtype=np.int64))
    offs = offsets[ok]
    if not atomic and not interp.launch.assumed:  # a race between programs that ran is a race
        prev = plain[offs]
        other = (prev >= 0) & (prev != interp.program_index)
        atom = interp.mem.atomic.get(t.index)
        if atom is not None:
            other |= (atom[offs] >= 0) & (atom[offs] != interp.program_index)
        if other.any():
            i = int(np.argmax(other))
            who = int(prev[i]) if prev[i] >= 0 else int(atom[offs][i])  # type: ignore[index]
            interp.fact(
                "race",
                node,
                global_=True,
                tensor=t.name,
                element=coords[ok][i].tolist(),
                symbols=list(t.symbols),
                other_pid=list(interp.program_ids[who][: max(interp.launch.grid_axes, 1)]),
            )
        uniq, counts = np.unique(offs, return_counts=True)
        if (counts > 1).any():
            dup = int(uniq[np.argmax(counts > 1)])
            c, _ = t.unravel(np.asarray([dup]))
            if ptr is not None and ptr.loaded_from:
                _scatter_collision(interp, t, offs, ok, v, shape, dup, c.reshape(-1).tolist(), node)
            interp.fact(
                "race",
                node,
                global_=True,
                tensor=t.name,
                element=c.reshape(-1).tolist(),
                symbols=list(t.symbols),
                other_pid=None,
            )
    if atomic and interp.kernel.autotune is not None:
        at = interp.kernel.autotune
        if t.name not in at.reset_to_zero and t.name not in at.restore_value and atomic == "atomic_add":
            interp.fact("autotune-atomic", node, tensor=t.name, related=[(at.node, "the autotune decorator")])
    if not atomic and interp.kernel.autotune is not None and t.index in interp.mem.loaded:
        at = interp.kernel.autotune
        if t.name not in at.restore_value and t.name not in at.reset_to_zero:
            interp.fact(
                "autotune-inplace", node, tensor=t.name, related=[(at.node, "the autotune decorator")]
            )
    writer[offs] = interp.program_index
    interp.mem.last_store[t.index] = (node, interp.smap)
    if v.kcover is not None and not v.kcover.get("invalid"):
        record_coverage(interp, t, offs, coords[ok], v, plain=not atomic, store=(node, interp.smap))


_varies = tagops.varies


def _scatter_collision(
    interp: Interpreter,
    t: TensorInfo,
    offs: np.ndarray,
    ok: np.ndarray,
    v: Val,
    shape: tuple[int, ...],
    dup: int,
    element: list[int],
    node: ast.AST,
) -> None:
    """DF004 through a permutation of ids (sorted MoE slots): two lanes gathered at different
    positions of the id list hold different ids, so their values belong to different rows; if
    the scatter sends both to one element, the output is not addressed by the id."""
    lanes = np.flatnonzero(offs == dup)
    for k in sorted(v.index_tags):
        if k not in v.tags:
            continue
        pos = bc(v.tags[k], shape)[ok]
        got = pos[lanes]
        got = got[~np.isnan(got)]
        if got.size and np.unique(got).size > 1:
            interp.fact(
                "scatter-collision",
                node,
                tensor=t.name,
                dest=element,
                symbols=list(t.symbols),
                index_symbol=k.rstrip("'"),
                positions=sorted(int(x) for x in np.unique(got)[:2]),
            )
            return


def _check_store_tags(
    interp: Interpreter,
    t: TensorInfo,
    coords: np.ndarray,
    ok: np.ndarray,
    v: Val,
    node: ast.AST,
    shape: tuple[int, ...],
    ptr: Ptr | None,
) -> None:
    """DF004: the value stored at out[i, j] was computed for (i, j), and a value gathered
    through a loaded index is scattered through the same index."""
    if not v.tags or not ok.any() or v.unknown:
        return
    keys = tag_keys(t)
    dest = {k: np.where(ok, coords[..., d], np.nan) for d, k in enumerate(keys)}
    if ptr is not None:
        for k, arr in ptr.tags.items():
            dest.setdefault(k, np.where(ok, bc(arr, shape), np.nan))
    valid = ok.copy()
    if v.pad is not None:
        valid &= ~bc(v.pad, shape)
    if v.undef is not None:
        valid &= ~bc(v.undef, shape)
    if not valid.any():
        return
    vt = {k: np.where(valid, bc(a, shape), np.nan) for k, a in v.tags.items()}
    dest = {k: np.where(valid, a, np.nan) for k, a in dest.items()}

    def base(k: str) -> str:
        return k.rstrip("'")

    for ax in range(len(shape)):
        for dk, darr in dest.items():
            if not _varies(darr, ax):
                continue
            cands = [k for k in vt if base(k) == base(dk)]
            if not cands:
                continue
            along = [k for k in cands if _varies(vt[k], ax)]
            if along:
                if any(not tagops.differ(vt[k], darr).any() for k in along):
                    continue
                k = along[0]
                diff = tagops.differ(vt[k], darr)
                lane = tuple(int(i) for i in np.argwhere(diff)[0])
                interp.fact(
                    "store-tag",
                    node,
                    tensor=t.name,
                    lane=list(lane),
                    dest=coords[lane].tolist(),
                    symbols=list(t.symbols),
                    symbol=base(dk),
                    expected=int(darr[lane]),
                    got=int(vt[k][lane]),
                )
                return
            moving = [k for k in cands if any(_varies(vt[k], a2) for a2 in range(len(shape)) if a2 != ax)]
            if moving:
                k = moving[0]
                diff = tagops.differ(vt[k], darr)
                if diff.any():
                    lane = tuple(int(i) for i in np.argwhere(diff)[0])
                    interp.fact(
                        "store-tag",
                        node,
                        tensor=t.name,
                        lane=list(lane),
                        dest=coords[lane].tolist(),
                        symbols=list(t.symbols),
                        symbol=base(dk),
                        expected=int(darr[lane]),
                        got=int(vt[k][lane]),
                        transposed=True,
                    )
                    return
    # a row gathered through a loaded index must be scattered through the same index
    dest_bases = {base(k) for k in dest}
    for k in v.index_tags:
        if k in vt and base(k) not in dest_bases and any(_varies(vt[k], ax) for ax in range(len(shape))):
            lane = tuple(int(i) for i in np.argwhere(valid & ~np.isnan(vt[k]))[0])
            interp.fact(
                "scatter-index",
                node,
                tensor=t.name,
                lane=list(lane),
                dest=coords[lane].tolist(),
                symbols=list(t.symbols),
                index_symbol=base(k),
                index_value=int(vt[k][lane]),
            )
            return


def atomic(name: str) -> Any:
    def run(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if name == "atomic_cas":
            raise Unevaluable("`tl.atomic_cas`", node)
        return store(interp, args, kwargs, node, atomic=name)

    return run


# ---- block pointers and tensor descriptors ----------------------------------------------------------
def _ints(interp: Interpreter, x: Any, node: ast.AST) -> tuple[int, ...]:
    if not isinstance(x, tuple | list):
        x = [x]
    out = []
    for v in x:
        vv = to_val(v, node)
        if vv.unknown or not vv.is_scalar:
            raise Unevaluable("a block pointer or descriptor with non-scalar geometry", node)
        out.append(int(vv.item()))
    return tuple(out)


def make_block_ptr(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> BlockPtr:
    names = ["base", "shape", "strides", "offsets", "block_shape", "order"]
    vals = dict(zip(names, args, strict=False))
    vals.update(kwargs)
    base = vals["base"]
    if not isinstance(base, Ptr) or base.offsets.ndim != 0:
        raise Unevaluable("a block pointer whose base is not a scalar pointer", node)
    for k in ("shape", "strides", "offsets"):
        for v in vals[k] if isinstance(vals[k], tuple | list) else [vals[k]]:
            vv = to_val(v, node)
            if vv.overflow_site is not None:
                base.overflow_site = base.overflow_site or vv.overflow_site
    bp = BlockPtr(
        base.tensor,
        int(base.offsets),
        _ints(interp, vals["shape"], node),
        _ints(interp, vals["strides"], node),
        _ints(interp, vals["offsets"], node),
        _ints(interp, vals["block_shape"], node),
        _ints(interp, vals.get("order", ()), node),
        node,
    )
    bp.ptr = base  # type: ignore[attr-defined]
    return bp


def advance(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> BlockPtr:
    bp = args[0] if args else kwargs["base"]
    if not isinstance(bp, BlockPtr):
        raise Unevaluable("tl.advance of something that is not a block pointer", node)
    delta = _ints(interp, args[1] if len(args) > 1 else kwargs["offsets"], node)
    out = BlockPtr(
        bp.tensor,
        bp.base_offset,
        bp.shape,
        bp.strides,
        tuple(o + d for o, d in zip(bp.offsets, delta, strict=True)),
        bp.block_shape,
        bp.order,
        bp.site,
    )
    out.ptr = getattr(bp, "ptr", None)  # type: ignore[attr-defined]
    return out


def _block_geometry(bp: BlockPtr | Descriptor, offsets: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Physical offsets and in-shape flags of every lane of a block at `offsets`."""
    shape = tuple(bp.block_shape)
    phys = np.full(shape, bp.base_offset, dtype=np.int64)
    inside = np.ones(shape, dtype=bool)
    for d, idx in enumerate(_block_axes(bp, offsets)):
        phys = phys + idx * bp.strides[d]
        inside &= (idx >= 0) & (idx < bp.shape[d])
    return phys, inside


def _block_axes(bp: BlockPtr | Descriptor, offsets: tuple[int, ...]) -> list[np.ndarray]:
    """Each dimension's indices, shaped to broadcast against the block (an open mesh)."""
    rank = len(bp.block_shape)
    out = []
    for d, b in enumerate(bp.block_shape):
        shape = [1] * rank
        shape[d] = b
        out.append(offsets[d] + np.arange(b, dtype=np.int64).reshape(shape))
    return out


def _boundary(kwargs: dict[str, Any], rank: int, node: ast.AST) -> set[int]:
    bc_ = kwargs.get("boundary_check")
    if bc_ is None:
        return set()
    vals = bc_ if isinstance(bc_, tuple | list) else [bc_]
    return {int(to_val(v, node).item()) for v in vals}


def _block_lanes(bp: BlockPtr, kwargs: dict[str, Any], node: ast.AST) -> tuple[np.ndarray, np.ndarray]:
    """Physical offsets of a block pointer's lanes, and which lanes `boundary_check` keeps:
    only the dimensions it names are clipped; the others are trusted (and judged by MB001/2)."""
    phys, _inside = _block_geometry(bp, bp.offsets)
    active = np.ones(phys.shape, dtype=bool)
    checked = _boundary(kwargs, len(bp.block_shape), node)
    if checked:
        axes = _block_axes(bp, bp.offsets)
        for d in checked:
            active &= (axes[d] >= 0) & (axes[d] < bp.shape[d])
    return phys, active


def block_load(interp: Interpreter, bp: BlockPtr, kwargs: dict[str, Any], node: ast.AST) -> Val:
    phys, active = _block_lanes(bp, kwargs, node)
    t = bp.tensor
    interp.mem.loaded.add(t.index)
    valid = _oob(interp, t, phys, active, node, "oob-load")
    pad_opt = kwargs.get("padding_option")
    other = float("nan") if isinstance(pad_opt, str) and pad_opt == "nan" else 0.0
    ptr = getattr(bp, "ptr", None)
    return _make_loaded(interp, ptr, t, phys, active, valid, other, node, phys.shape)


def block_store(interp: Interpreter, bp: BlockPtr, value: Any, kwargs: dict[str, Any], node: ast.AST) -> None:
    phys, active = _block_lanes(bp, kwargs, node)
    t = bp.tensor
    v = to_val(value, node)
    valid = _oob(interp, t, phys, active, node, "oob-store")
    coords, _ = interp.unravel(t, phys)
    record_store(interp, t, phys, active & valid, v, coords, node, phys.shape, None, getattr(bp, "ptr", None))


def make_descriptor(
    interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Descriptor:
    names = ["base", "shape", "strides", "block_shape"]
    vals = dict(zip(names, args, strict=False))
    vals.update(kwargs)
    base = vals["base"]
    if not isinstance(base, Ptr) or base.offsets.ndim != 0:
        raise Unevaluable("a tensor descriptor whose base is not a scalar pointer", node)
    d = Descriptor(
        base.tensor,
        int(base.offsets),
        _ints(interp, vals["shape"], node),
        _ints(interp, vals["strides"], node),
        _ints(interp, vals["block_shape"], node),
    )
    return d


def descriptor_method(
    interp: Interpreter, base: Any, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Any:
    if not isinstance(base, Descriptor):
        raise Unevaluable(f"`.{name}()` on {type(base).__name__}", node)
    offsets = _ints(interp, args[0] if args else kwargs["offsets"], node)
    phys, inside = _block_geometry(base, offsets)
    t = base.tensor
    if name == "load":
        interp.mem.loaded.add(t.index)
        valid = _oob(interp, t, phys, inside, node, "oob-load")
        return _make_loaded(interp, None, t, phys, inside, valid, 0.0, node, phys.shape)
    v = to_val(args[1] if len(args) > 1 else kwargs["value"], node)
    valid = _oob(interp, t, phys, inside, node, "oob-store")
    coords, _ = interp.unravel(t, phys)
    record_store(
        interp,
        t,
        phys,
        inside & valid,
        v,
        coords,
        node,
        phys.shape,
        "atomic_add" if name == "atomic_add" else None,
        None,
    )
    return None


OPS = [
    *declare(
        "memory",
        {
            "load": load,
            "store": store,
            "atomic_add": atomic("atomic_add"),
            "atomic_max": atomic("atomic_max"),
            "atomic_min": atomic("atomic_min"),
        },
        takes_pointer=True,
        mask_fix=True,
    ),
    *declare(
        "memory",
        {
            "atomic_xchg": atomic("atomic_xchg"),
            "atomic_and": atomic("atomic_and"),
            "atomic_or": atomic("atomic_or"),
            "atomic_xor": atomic("atomic_xor"),
            "atomic_cas": atomic("atomic_cas"),
            "make_block_ptr": make_block_ptr,
            "make_tensor_descriptor": make_descriptor,
        },
        takes_pointer=True,
    ),
    *declare("memory", {"advance": advance}),
]
