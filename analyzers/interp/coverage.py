"""Coverage, recorded as stores run and judged once all programs of a probe ran.

Reduction coverage: how often each contraction index entered a value (`tl.dot` and sums over a
loop), merged through arithmetic and recorded per stored element; DF003 compares it with the
extent of the reduced dimension (`judge_reduction_coverage`). Output coverage: which elements of
each output some program wrote (the writers are recorded by access_checks.py); GR001 asks that an
output the kernel creates, or one the grid tiles in every dimension, is written everywhere
(`judge_output_coverage`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.values import TensorInfo, Val
from argus.analyzers.model.kernel import SourceMap

if TYPE_CHECKING:
    from argus.analyzers.interp.context import MemoryLog, OpContext, RunContext
    from argus.analyzers.model.launch import ProbeLaunch


def merge_cover(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    if a.get("invalid") or b.get("invalid"):
        return {"invalid": True}
    if a.get("key") != b.get("key") or a["counts"].shape != b["counts"].shape:
        return a
    out = dict(a)
    out["counts"] = a["counts"] if _whole(a) and _whole(b) else a["counts"] + b["counts"]
    out["direct"] = a.get("direct", False) and b.get("direct", False)
    return out


def _whole(cover: dict[str, Any]) -> bool:
    """Every index of the extent entered exactly once: a finished contraction (a dot over all of
    K in one tile). Two of them added are a sum over another axis (chunks of a scan, the steps of
    an iterative solver), each term holding the whole reduction once: not a double count (K24).
    A partial tile added to anything still adds its counts."""
    counts = cover["counts"]
    return bool(counts.size) and bool((counts == 1).all())


@dataclass
class ReductionCover:
    """What one stored element received of a reduction: per index of the reduced extent, how
    often it entered (`counts`), and where to report it."""

    counts: np.ndarray
    loop_node: ast.AST
    smap: SourceMap
    tensor: str
    dim: str  # the symbol of the reduced dimension
    pid: tuple[int, ...]
    element: list[int]
    direct: bool  # both operands loaded directly (GEMM): every index must come exactly once
    plain: bool  # one non-atomic store wrote the element: its program did the whole reduction
    store: tuple[ast.AST, SourceMap] | None


def record_coverage(
    interp: OpContext,
    t: TensorInfo,
    offs: np.ndarray,
    coords: np.ndarray,
    v: Val,
    plain: bool = False,
    store: Any = None,
) -> None:
    """Add a stored value's reduction coverage to its element's. `plain`: a non-atomic store,
    so one program's reduction is the element's whole value."""
    cover = v.kcover
    key = (t.index, int(offs[0]))
    loop_node, smap = cover["loop"]
    entry = interp.mem.coverage.get(key)
    if entry is None:
        interp.mem.coverage[key] = ReductionCover(
            cover["counts"].copy(),
            loop_node,
            smap,
            t.name,
            cover["key"],
            interp.pid[: max(interp.launch.grid_axes, 1)],
            coords[0].tolist(),
            bool(cover.get("direct")),
            plain,
            store,
        )
    elif plain and entry.plain and entry.pid == interp.pid[: max(interp.launch.grid_axes, 1)]:
        # the same program stores the element again (a value refined after a first store,
        # a triangular solve over the rows it stored): the later value replaces the earlier
        entry.counts = cover["counts"].copy()
        entry.loop_node, entry.smap, entry.store = loop_node, smap, store
    else:
        entry.plain = False  # written more than once: the sum of several programs' parts
        if entry.counts.shape == cover["counts"].shape and entry.dim == cover["key"]:
            entry.counts = entry.counts + cover["counts"]
        else:  # reductions over extents of other lengths (or dims) meet: no index to compare
            entry.counts = np.zeros(0, dtype=entry.counts.dtype)


def judge_reduction_coverage(interp: RunContext) -> None:
    """DF003: operands loaded directly (GEMM): every index exactly once; computed operands (P @ V
    under a causal mask): no index twice, since masked keys legitimately count zero."""
    launch = interp.launch
    for entry in interp.mem.coverage.values():
        counts = entry.counts
        # with sampled programs a missing index may belong to a program that did not run,
        # unless one plain store wrote the element (its program did the whole reduction)
        whole = interp.complete or (entry.plain and launch.kind == "ragged" and not launch.sampled)
        bad = np.nonzero(counts != 1)[0] if entry.direct and whole else np.nonzero(counts > 1)[0]
        if not bad.size:
            continue
        loop_node, smap = entry.loop_node, entry.smap
        if not interp.complete and entry.store is not None and not (counts > 1).any():
            # a skipped index judged from one plain store (programs were sampled): the
            # store is where the partial value lands
            loop_node, smap = entry.store
        k = int(bad[0])
        interp.sink.add(
            Fact(
                "coverage",
                loop_node,
                smap,
                {
                    "sizes": interp.launch.describe_sizes(),
                    "probe": interp.launch.kind,
                    "pid": entry.pid,
                    "tensor": entry.tensor,
                    "dim": entry.dim,
                    "index": k,
                    "count": int(counts[k]),
                    "missing": int((counts == 0).sum()),
                    "extra": int((counts > 1).sum()),
                    "element": entry.element,
                    "config": ", ".join(
                        f"{k2}={v}"
                        for k2, v in (interp.launch.config or {}).items()
                        if not k2.startswith("num_")
                    ),
                },
                [],
                True,
            )
        )


def judge_output_coverage(interp: RunContext) -> bool:
    """GR001: every element of an output that must be written whole was written by some
    program (plainly or atomically). Judged only when every program of the grid ran. True
    when some output was judged and every one judged was written whole by plain stores alone."""
    judged, whole = 0, True
    for tidx, writer in interp.mem.writer.items():
        t = _tensor_by_index(interp.launch, tidx)
        if t is None or not _must_be_covered(interp.mem, tidx, t):
            continue
        atomic = interp.mem.atomic.get(tidx, np.full_like(writer, -1))
        written = (writer >= 0) | (atomic >= 0)
        offs = _valid_offsets(t)
        missing = offs[~written[offs]]
        judged += 1
        whole = whole and not missing.size and not (atomic >= 0).any()
        if missing.size:
            _report_uncovered(interp, tidx, t, offs, missing)
    return bool(judged) and whole


def every_store_whole(interp: RunContext) -> bool:
    """Every sized tensor the programs stored to was written whole by plain stores, updated in
    place or not (nothing reported): with a grid axis the kernel reads but the launch lacks,
    the axis at 0 then left no element of any of them undone (sglang's lightning attention
    reads `program_id(2)` for its one feature block, `E_FBLOCK = e`)."""
    found = False
    for tidx, writer in interp.mem.writer.items():
        t = _tensor_by_index(interp.launch, tidx)
        if t is None or not t.sized or t.bounds_unjudged or tidx in interp.mem.coverage_unjudged:
            return False
        atomic = interp.mem.atomic.get(tidx)
        if atomic is not None and (atomic >= 0).any():
            return False
        offs = _valid_offsets(t)
        if not (writer[offs] >= 0).all():
            return False
        found = True
    return found


def _must_be_covered(mem: MemoryLog, tidx: int, t: TensorInfo) -> bool:
    """Uninitialized outputs must be fully written; a tensor the grid tiles in every dimension
    (an in-place update) too; others (caches, slices) may be partial. Sizes the launch does not
    state, and rows reached through group offsets, leave it unjudged."""
    if not t.sized or t.bounds_unjudged:
        return False
    if not (t.created and tidx not in mem.loaded) and not t.grid_tiled:
        return False
    return tidx not in mem.coverage_unjudged


def _report_uncovered(
    interp: RunContext, tidx: int, t: TensorInfo, offs: np.ndarray, missing: np.ndarray
) -> None:
    node, smap = interp.mem.last_store[tidx]
    coords, _ = t.unravel(missing[:1])
    interp.sink.add(
        Fact(
            "uncovered",
            node,
            smap,
            {
                "sizes": interp.launch.describe_sizes(),
                "probe": interp.launch.kind,
                "tensor": t.name,
                "element": coords.reshape(-1).tolist(),
                "symbols": list(t.symbols),
                "shape": tuple(t.shape),
                "int_data": bool(getattr(interp, "site_tensor", None)),
                "missing": int(missing.size),
                "total": int(offs.size),
                "grid": interp.launch.grid[: interp.launch.grid_axes],
                "config": ", ".join(
                    f"{k}={v}" for k, v in (interp.launch.config or {}).items() if not k.startswith("num_")
                ),
            },
            [(interp.launch.site.grid_node, interp.launch.site.smap, "the launch grid")]
            if interp.launch.site
            else [],
            True,
        )
    )


def _tensor_by_index(launch: ProbeLaunch, idx: int) -> TensorInfo | None:
    for v in launch.args.values():
        if isinstance(v, TensorInfo) and v.index == idx:
            return v
    return None


def _valid_offsets(t: TensorInfo) -> np.ndarray:
    """The offset of every element of `t` (its strides applied to every coordinate)."""
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in t.shape], indexing="ij")
    offs = np.zeros(grids[0].shape if grids else (), dtype=np.int64)
    for g, st in zip(grids, t.strides, strict=True):
        offs = offs + g * st
    return offs.reshape(-1)
