"""Memory operations: pointer arithmetic, loads, stores, atomics, block pointers, descriptors.

Every lane a memory operation touches with its mask on is located in its tensor (coordinates
from the probe's strides, gaps included), so an out-of-bounds lane is an exact witness. Loads
tag their elements; stores hand the value and its destination to access_checks.py, which
compares tags, logs who wrote what (coverage and races) and checks undefined or NaN lanes.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp.absent_args import absent_pointer
from argus.analyzers.interp.access_checks import check_access, record_store, report_out_of_bounds
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_core import Retype, bc, bshape, light_float, tag_keys, to_val
from argus.analyzers.interp.values import BlockPtr, Descriptor, FullRun, Ptr, TensorInfo, Val, is_float

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


def pointer_arith(interp: OpContext, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
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
    if v.held:
        garbage.keep(interp, v)  # an address computed from a spoiled value keeps it
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
    interp: OpContext, mask: Any, shape: tuple[int, ...], node: ast.AST
) -> tuple[np.ndarray, Val | None]:
    if mask is None:
        return np.ones(shape, dtype=bool), None
    m = to_val(mask, node)
    if m.unknown:
        raise Unevaluable(f"a mask computed from {m.unknown}", node)
    if m.held:
        garbage.keep(interp, m)  # so does a mask computed from one
    return bc(m.data.astype(bool), bshape(shape, m.shape)), m


def load(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    ptr = args[0] if args else kwargs.get("pointer")
    mask = args[1] if len(args) > 1 else kwargs.get("mask")
    other = args[2] if len(args) > 2 else kwargs.get("other")
    if isinstance(ptr, BlockPtr):
        return block_load(interp, ptr, kwargs, node)
    if ptr is None:
        ptr = absent_pointer(interp, node)
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
    _note_read_first(interp, t, offsets, active)
    valid = report_out_of_bounds(interp, t, offsets, active, node, "oob-load", ptr)
    check_access(interp, ptr, mval, active, node, "load")
    return _make_loaded(interp, ptr, t, offsets, active, valid, other, node, shape)


def _make_loaded(
    interp: OpContext,
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
        pad = ~active  # all False when every lane is in: still per-lane data (ops_core._combine_pad)
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
        # the elements read, not the load: a later pass over the same row is the same data
        read = np.where(active, offsets, -1)
        out.lineage = interp.new_lineage(("load", t.index, read.shape, read.tobytes()))
    interp.record_load_step(node, offsets, t, active)
    return out


def store(
    interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST, atomic: str | None = None
) -> Any:
    ptr = args[0] if args else kwargs.get("pointer")
    value = args[1] if len(args) > 1 else kwargs.get("value", kwargs.get("val"))
    mask = args[2] if len(args) > 2 else kwargs.get("mask")
    if isinstance(ptr, BlockPtr):
        return block_store(interp, ptr, value, kwargs, node)
    if ptr is None:
        ptr = absent_pointer(interp, node)
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
    valid = report_out_of_bounds(interp, t, offsets, active, node, "oob-store", ptr)
    check_access(interp, ptr, mval, active, node, "atomic" if atomic else "store")
    coords, _ = interp.unravel(t, offsets)
    garbage.keep(interp, v, active)  # every lane written with the mask on, in bounds or not
    ok = active & valid
    if not t.sized:
        # bounds are not judged on a tensor of unknown extent (every lane is `valid`), but who
        # wrote what is kept per element of its nominal extent: lanes past it have no slot
        ok = ok & (offsets >= 0) & (offsets < max(t.extent, 1))
    record_store(interp, t, offsets, ok, v, coords, node, shape, atomic, ptr)
    if atomic:
        return _atomic_old_value(interp, t, v, node, shape)
    return None


def _atomic_old_value(interp: OpContext, t: TensorInfo, v: Val, node: ast.AST, shape: tuple[int, ...]) -> Val:
    """What an atomic returns, the element's value before it, depends on the order programs
    reach it at run time. An integer one is a ticket (`slot = tl.atomic_add(counter, 1)`: each
    caller its own row): it is treated like a loaded index whose range is the counter's
    contract, so addresses made from it are not judged on a made-up order (bounds, races,
    coverage), and trusted as MB005 trusts a range the caller guarantees."""
    out = Val(np.zeros(shape), v.dtype)
    if not is_float(v.dtype):
        site = id(node)
        interp.site_tensor[site] = t.index
        interp.site_name[site] = t.name
        interp.trusted_tensors.add(t.index)
        out.loaded_from = frozenset({site})
        out.grows = True
    return out


def atomic(name: str) -> Any:
    def run(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if name == "atomic_cas":
            raise Unevaluable("`tl.atomic_cas`", node)
        return store(interp, args, kwargs, node, atomic=name)

    return run


def _ints(interp: OpContext, x: Any, node: ast.AST) -> tuple[int, ...]:
    if not isinstance(x, tuple | list):
        x = [x]
    out = []
    for v in x:
        vv = to_val(v, node)
        if vv.unknown or not vv.is_scalar:
            raise Unevaluable("a block pointer or descriptor with non-scalar geometry", node)
        out.append(int(vv.item()))
    return tuple(out)


def make_block_ptr(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> BlockPtr:
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


def advance(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> BlockPtr:
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


def _note_read_first(interp: OpContext, t: TensorInfo, offsets: np.ndarray, active: np.ndarray) -> None:
    """Mark the tensor as read before written where a lane reads an element this program has
    not stored yet (GR004 reads it; a block or descriptor load counts as such a read). A tensor
    whose extent the launcher never states keeps a buffer of its probe size, and stores past
    it are not tracked (access_checks `_record_writers`): only lanes inside that buffer say
    whether the element was this program's own earlier store; the others leave it unjudged."""
    mem = interp.mem
    if t.index in mem.read_first:
        return
    offs = offsets[active]
    if not t.sized:
        offs = offs[(offs >= 0) & (offs < max(t.extent, 1))]
        if not offs.size:
            return
    writer = mem.writer.get(t.index)
    if writer is None or not offs.size:
        mem.read_first.add(t.index)
        return
    inside = (offs >= 0) & (offs < writer.size)
    if not inside.all() or (writer[offs[inside]] != interp.program_index).any():
        mem.read_first.add(t.index)


def block_load(interp: OpContext, bp: BlockPtr, kwargs: dict[str, Any], node: ast.AST) -> Val:
    phys, active = _block_lanes(bp, kwargs, node)
    t = bp.tensor
    interp.mem.loaded.add(t.index)
    interp.mem.read_first.add(t.index)
    valid = report_out_of_bounds(interp, t, phys, active, node, "oob-load")
    pad_opt = kwargs.get("padding_option")
    other = float("nan") if isinstance(pad_opt, str) and pad_opt == "nan" else 0.0
    ptr = getattr(bp, "ptr", None)
    return _make_loaded(interp, ptr, t, phys, active, valid, other, node, phys.shape)


def block_store(interp: OpContext, bp: BlockPtr, value: Any, kwargs: dict[str, Any], node: ast.AST) -> None:
    phys, active = _block_lanes(bp, kwargs, node)
    t = bp.tensor
    v = to_val(value, node)
    valid = report_out_of_bounds(interp, t, phys, active, node, "oob-store")
    coords, _ = interp.unravel(t, phys)
    garbage.keep(interp, v, active)
    record_store(interp, t, phys, active & valid, v, coords, node, phys.shape, None, getattr(bp, "ptr", None))


def make_descriptor(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Descriptor:
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
    interp: OpContext, base: Any, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Any:
    if not isinstance(base, Descriptor):
        raise Unevaluable(f"`.{name}()` on {type(base).__name__}", node)
    offsets = _ints(interp, args[0] if args else kwargs["offsets"], node)
    phys, inside = _block_geometry(base, offsets)
    t = base.tensor
    if name == "load":
        interp.mem.loaded.add(t.index)
        interp.mem.read_first.add(t.index)
        valid = report_out_of_bounds(interp, t, phys, inside, node, "oob-load")
        return _make_loaded(interp, None, t, phys, inside, valid, 0.0, node, phys.shape)
    v = to_val(args[1] if len(args) > 1 else kwargs["value"], node)
    try:
        fits = np.broadcast_shapes(v.shape, phys.shape) == phys.shape
    except ValueError:
        fits = False
    if not fits:  # a compile error in Triton; here the block shape may be a guess of the binder
        raise Unevaluable(f"a descriptor store of a {v.shape} tile into blocks of {phys.shape}", node)
    valid = report_out_of_bounds(interp, t, phys, inside, node, "oob-store")
    coords, _ = interp.unravel(t, phys)
    garbage.keep(interp, v, inside)
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
