"""What a load or a store observes about its lanes: out-of-bounds lanes (MB001/MB002), int32
products in the address and unchecked loaded indices (MB003/MB005), and, for stores, the tags of
the value against the destination (DF004), who wrote each element (coverage, races: GR001/GR002)
and the autotune hazards of writing (GR004). Each observation is recorded as a fact.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.coverage import record_coverage
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.ops_core import bc, nan_lanes, tag_keys
from argus.analyzers.interp.rule_same_store import record_stored, repeats_stored
from argus.analyzers.interp.values import Ptr, TensorInfo, Val, is_float

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext
    from argus.analyzers.model.scan import IndexPolicy


def check_access(
    interp: OpContext, ptr: Ptr, mask_val: Val | None, active: np.ndarray, node: ast.AST, kind: str
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
                    "tensor_sized": ptr.tensor.sized,
                    "factor_fixed": operands.get("factor_name") in interp.launch.fixed_runtime,
                    "expr": _text_of(onode),
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
                        "compared": _range_evidence(src, pol),
                    },
                    [(node, interp.smap, f"the {kind} it addresses")],
                )
            )


def _text_of(node: ast.AST) -> str:
    """`ast.unparse(node)`, kept on the node: every load or store through an offset with an int32
    product builds its MB003 fact again (the sink keeps the first), each with this text; trees
    are not edited after parsing (as `model/nodes.subtree` relies on)."""
    text = node.__dict__.get("_argus_text")
    if text is None:
        text = node._argus_text = ast.unparse(node)  # type: ignore[attr-defined]
    return text


def _range_evidence(src: str, pol: IndexPolicy | None) -> list[str]:
    """Where the kernel itself compares the index's contents with a bound or a sentinel (on
    another path than this access): the code says out-of-range values exist (MB005 warns)."""
    if pol is None:
        return []
    out = [f"`{src}` is compared with {v} elsewhere" for v in sorted(pol.sentinels)]
    out += [f"`{src}` is compared with `{p}` elsewhere" for p in sorted(pol.sentinel_params)]
    if pol.upper:
        out.append(f"`{src}` is bounded by `{pol.upper}` elsewhere")
    if pol.lower_only:
        out.append(f"`{src}` is shifted into a window checked from below only")
    return out


def report_out_of_bounds(
    interp: OpContext,
    t: TensorInfo,
    offsets: np.ndarray,
    active: np.ndarray,
    node: ast.AST,
    kind: str,
    ptr: Ptr | None = None,
) -> np.ndarray:
    coords, valid = interp.unravel(t, offsets)
    if not t.sized or t.bounds_unjudged:
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
            int_data=bool(interp.site_tensor),
        )
    return valid


def _contract_contents(interp: OpContext, ptr: Ptr) -> bool:
    """Every loaded index behind this pointer comes from a table synthesized to its contract
    (sorted ids: each valid id once; group offsets: a partition of the rows)."""
    return {interp.site_tensor.get(s) for s in ptr.loaded_from} <= interp.contract_tables


def _partitioned(interp: OpContext, ptr: Ptr) -> bool:
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


def record_store(
    interp: OpContext,
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
    """What a store observes, in order: the value it writes (undefined lanes, NaN rows), the
    tags of that value against its destination (DF004), and who wrote each element (coverage,
    races, autotune hazards). In an address-only program the stored floats are stand-ins, so
    only where they go is checked."""
    stand_in = interp.address_only and is_float(v.dtype)
    _check_stored_value(interp, t, ok, v, coords, node, shape, stand_in)
    if not stand_in:
        _check_store_tags(interp, t, coords, ok, v, node, shape, ptr)
    _record_writers(interp, t, offsets, ok, v, coords, node, shape, atomic, ptr)


def _check_stored_value(
    interp: OpContext,
    t: TensorInfo,
    ok: np.ndarray,
    v: Val,
    coords: np.ndarray,
    node: ast.AST,
    shape: tuple[int, ...],
    stand_in: bool,
) -> None:
    """Undefined lanes stored (MB004) and NaN made by a fully masked row (NU004). (Lanes a
    reduction spoiled are kept by the store itself, on every lane its mask writes: garbage.py.)"""
    vshape = bc(v.data, shape)
    if stand_in:
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
        made = nan_lanes(v)
        if made is not None:
            nan &= bc(made, shape)  # only the NaN this site made (not a log of a negative)
        if nan.any():
            snode, ssmap = v.nan_site[:2]
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


def _record_writers(
    interp: OpContext,
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
    """Who wrote what: coverage (GR001) and races (GR002). Scatters through loaded indices
    depend on the routing contents, which are synthesized: judged only where the contents are
    a permutation of the valid ids (sorted token ids padded past the valid count)."""
    if ptr is not None and ptr.loaded_from and not _contract_contents(interp, ptr):
        return
    if ptr is not None and ptr.loaded_from and _partitioned(interp, ptr):
        # rows picked through group offsets: whether the grid reaches every row depends on how
        # the launcher's bound (`max_seqlen`) relates to the offsets, which it does not state
        interp.mem.coverage_unjudged.add(t.index)
    n = max(t.extent, 1)
    # a tensor of unknown extent (unsized) keeps a buffer of its probe size, but its bounds are
    # not judged: lanes past that buffer are not tracked (they made `plain[offs]` an IndexError)
    ok = ok & (offsets >= 0) & (offsets < n)
    if not ok.any():
        interp.mem.last_store.setdefault(t.index, (node, interp.smap))
        return
    table = interp.mem.atomic if atomic else interp.mem.writer
    # (the tables are made once per tensor: `setdefault(k, np.full(n, ...))` built two arrays of
    # the tensor's extent at every store, most of the time of a store-heavy kernel)
    writer = table.get(t.index)
    if writer is None:
        writer = table[t.index] = np.full(n, -1, dtype=np.int64)
    plain = interp.mem.writer.get(t.index)
    if plain is None:
        plain = interp.mem.writer[t.index] = np.full(n, -1, dtype=np.int64)
    offs = offsets[ok]
    judged = t.sized and not (atomic or interp.launch.assumed or t.bounds_unjudged)  # programs that ran, a stated layout
    if judged and not _same_for_every_writer(interp, v):
        _check_races(interp, t, offs, ok, v, coords, node, shape, plain, ptr)
    _check_autotune_hazards(interp, t, node, atomic)
    if not atomic:
        record_stored(interp.mem.stored, t.index, n, offs, ok, v, shape, interp.address_only)
    writer[offs] = interp.program_index
    interp.mem.last_store[t.index] = (node, interp.smap)
    if v.kcover is not None and not v.kcover.get("invalid") and not _inside_its_loop(interp, v, node):
        record_coverage(interp, t, offs, coords[ok], v, plain=not atomic, store=(node, interp.smap))


def _inside_its_loop(interp: OpContext, v: Val, node: ast.AST) -> bool:
    """A store inside the loop that accumulates the value writes its running state: a prefix
    (`h[i_t] = state before chunk i_t`, a scan), not the finished reduction, so it says nothing
    about which indices the reduction covers. Only stores after the loop are judged (DF003)."""
    loop, smap = v.kcover["loop"]
    if smap is not interp.smap or not hasattr(loop, "end_lineno") or not hasattr(node, "lineno"):
        return False
    if loop.lineno <= node.lineno <= (loop.end_lineno or loop.lineno):
        return True
    # nested (the state of each chunk summed in an inner loop over sub-chunks): a store in an
    # outer loop around that inner loop, before it, writes the state entering the chunk
    return node.lineno < loop.lineno and any(
        _encloses(frame.node, loop) for frame in interp.loops if frame.node is not loop
    )


def _encloses(outer: ast.AST, inner: ast.AST) -> bool:
    start, end = getattr(outer, "lineno", None), getattr(outer, "end_lineno", None)
    return start is not None and end is not None and start < inner.lineno <= end  # type: ignore[attr-defined]


def _check_races(
    interp: OpContext,
    t: TensorInfo,
    offs: np.ndarray,
    ok: np.ndarray,
    v: Val,
    coords: np.ndarray,
    node: ast.AST,
    shape: tuple[int, ...],
    plain: np.ndarray,
    ptr: Ptr | None,
) -> None:
    """GR002 for a plain store: an element another program already wrote (plainly or
    atomically), or one this store writes from two lanes at once."""
    prev = plain[offs]
    other = (prev >= 0) & (prev != interp.program_index)
    if other.any():  # the very value another program stored there (wrapped lanes): idempotent
        other &= ~repeats_stored(interp.mem.stored, t.index, offs, ok, v, shape, interp.address_only)
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
    if (counts > 1).any() and not _same_value_per_element(v, ok, offs, shape):
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


def _same_value_per_element(v: Val, ok: np.ndarray, offs: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether the lanes that write one element all carry the same value computed from the
    same data (equal values and equal coordinate tags): a wrapped tail (`offs % W`) storing again
    what another lane stores, harmless whatever their order. Loaded data, lineage and undefined
    lanes must agree too: two lanes that read different rows are a race."""
    if v.undef is not None or v.unknown:
        return False
    data = np.broadcast_to(v.data, shape)[ok]
    tags = [np.broadcast_to(arr, shape)[ok] for arr in v.tags.values()]
    order = np.argsort(offs, kind="stable")
    so = offs[order]
    same_elem = so[1:] == so[:-1]
    if not same_elem.any():
        return True
    for arr in [data, *tags]:
        a = arr[order]
        both_nan = np.isnan(a[1:]) & np.isnan(a[:-1]) if a.dtype.kind == "f" else np.zeros(len(a) - 1, bool)
        if not np.all((a[1:] == a[:-1]) | both_nan | ~same_elem):
            return False
    return True


def _check_autotune_hazards(interp: OpContext, t: TensorInfo, node: ast.AST, atomic: str | None) -> None:
    """GR004: under autotuning every config runs on the same buffers, so a tensor that an
    atomic add accumulates into, or that a store updates in place (the kernel read it too),
    must be named in the decorator's `reset_to_zero` or `restore_value`."""
    if atomic and interp.kernel.autotune is not None:
        at = interp.kernel.autotune
        if t.name not in at.reset_to_zero and t.name not in at.restore_value and atomic == "atomic_add":
            interp.fact("autotune-atomic", node, tensor=t.name, related=[(at.node, "the autotune decorator")])
    if not atomic and interp.kernel.autotune is not None and t.index in interp.mem.read_first:
        at = interp.kernel.autotune
        if t.name not in at.restore_value and t.name not in at.reset_to_zero:
            interp.fact(
                "autotune-inplace", node, tensor=t.name, related=[(at.node, "the autotune decorator")]
            )


_varies = tagops.varies


def _same_for_every_writer(interp: OpContext, v: Val) -> bool:
    """The stored value depends on no program id, loop counter, loaded data or lane: a constant
    or an expression of scalar arguments (`tl.store(flag_ptr, 1)` by every program). Programs
    that all store it leave the element the same whatever their order: not a race. (A float in
    an address-only program is a stand-in: nothing is known of it.)"""
    if interp.address_only and is_float(v.dtype):
        return False
    return not (
        v.grows or v.lineage or v.loaded_from or v.tags or v.unknown or v.pid_axis is not None
    ) and bool(np.all(v.data == v.data.reshape(-1)[0]) if v.data.size else True)


def _scatter_collision(
    interp: OpContext,
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
    interp: OpContext,
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
    if ptr is not None and any(k.rstrip("'") == tagops.MOVED for k in ptr.tags):
        return  # an address the kernel permuted (values moved between lanes): not one lane's own
    keys = tag_keys(t)
    # coordinates in a stand-in layout (a tensor whose extents nobody states) are not the
    # tensor's: only the tags the address itself carries are compared
    dest = {k: np.where(ok, coords[..., d], np.nan) for d, k in enumerate(keys)} if t.sized else {}
    if ptr is not None:
        for k, arr in ptr.tags.items():
            dest.setdefault(k, np.where(ok, bc(arr, shape), np.nan))
    for b in _mixed_bases(ptr, shape) if ptr is not None else ():
        # the address combines coordinates of several lanes along one axis (a permutation the
        # kernel computes, a bitonic sort's index): where it points is not one lane's own
        # coordinate, so which element a lane stands for is not judged along that symbol
        dest = {k: a for k, a in dest.items() if k.rstrip("'") != b}
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
            # (a coordinate a value was gathered at through a loaded index is the data's, not
            # the lane's: `out[i] = x[idx[i]]` is judged by the scatter-index check below)
            cands = [k for k in vt if base(k) == base(dk) and k not in v.index_tags]
            if not cands:
                continue
            along = [k for k in cands if _varies(vt[k], ax)]
            if along:
                # a lane is its own where one of the value's coordinates along the symbol is
                # the destination's: a value mixed from two lanes (a butterfly's `x + partner`,
                # `tl.where` of `x + p` and `p - x`) carries both, under either key per lane
                wrong = _differs_from_every(vt, along, darr)
                if not wrong.any():
                    continue
                _store_tag_fact(interp, node, t, coords, base(dk), darr, np.where(wrong, vt[along[0]], np.nan))
                return
            moving = [k for k in cands if any(_varies(vt[k], a2) for a2 in range(len(shape)) if a2 != ax)]
            if moving and _known_along(vt, ax):
                if tagops.differ(vt[moving[0]], darr).any():
                    _store_tag_fact(interp, node, t, coords, base(dk), darr, vt[moving[0]], transposed=True)
                    return
    # a row gathered through a loaded index must be scattered through the same index; judged
    # only where the destination's own coordinates are known (a stand-in layout says nothing
    # of what `out[offs]` stands for: `take`'s `out[i] = x[idx[i]]` into an unsized `out`)
    if t.sized:
        _check_scatter_index(interp, t, coords, v, vt, valid, node, shape, {base(k) for k in dest})


def _check_scatter_index(
    interp: OpContext,
    t: TensorInfo,
    coords: np.ndarray,
    v: Val,
    vt: dict[str, np.ndarray],
    valid: np.ndarray,
    node: ast.AST,
    shape: tuple[int, ...],
    dest_bases: set[str],
) -> None:
    """A value gathered through a loaded index is stored where its own index says."""
    for k in v.index_tags:
        if k in vt and k.rstrip("'") not in dest_bases and any(_varies(vt[k], ax) for ax in range(len(shape))):
            lane = tuple(int(i) for i in np.argwhere(valid & ~np.isnan(vt[k]))[0])
            interp.fact(
                "scatter-index",
                node,
                tensor=t.name,
                lane=list(lane),
                dest=coords[lane].tolist(),
                symbols=list(t.symbols),
                index_symbol=k.rstrip("'"),
                index_value=int(vt[k][lane]),
            )
            return


def _differs_from_every(vt: dict[str, np.ndarray], keys: list[str], dest: np.ndarray) -> np.ndarray:
    """Lanes where every one of the value's coordinates under `keys` differs from `dest`."""
    wrong = tagops.differ(vt[keys[0]], dest)
    for k in keys[1:]:
        wrong &= tagops.differ(vt[k], dest)
    return wrong


def _mixed_bases(ptr: Ptr, shape: tuple[int, ...]) -> set[str]:
    """Symbols of which the pointer carries two coordinates varying along the same axis (`n`
    and `n'`: values of two lanes of that axis merged into one address)."""
    out: set[str] = set()
    by_base: dict[str, list[np.ndarray]] = {}
    for k, arr in ptr.tags.items():
        by_base.setdefault(k.rstrip("'"), []).append(arr)
    for b, arrs in by_base.items():
        if len(arrs) < 2:
            continue
        for ax in range(len(shape)):
            if sum(1 for a in arrs if tagops.varies_right(a, ax - len(shape))) > 1:
                out.add(b)
                break
    return out


def _known_along(vt: dict[str, np.ndarray], ax: int) -> bool:
    """Some coordinate of the value varies along `ax`: what its lanes along that axis were
    computed for is known. A value whose operand along `ax` carried no tags (a tile of a tensor
    the launch does not describe, multiplied into a product) has unknown rows; its one known
    coordinate running along another axis is no evidence of a transposition (cause K19)."""
    return any(_varies(a, ax) for a in vt.values())


def _store_tag_fact(interp, node, t, coords, symbol: str, expected, got, **extra) -> None:  # noqa: ANN001
    """The first lane whose stored coordinate along `symbol` differs from its destination's."""
    lane = tuple(int(i) for i in np.argwhere(tagops.differ(got, expected))[0])
    interp.fact(
        "store-tag",
        node,
        tensor=t.name,
        lane=list(lane),
        dest=coords[lane].tolist(),
        symbols=list(t.symbols),
        symbol=symbol,
        expected=int(expected[lane]),
        got=int(got[lane]),
        **extra,
    )
