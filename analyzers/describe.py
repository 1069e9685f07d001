"""Hover's wording: what the interpreter knows about one value of a kernel variable.

trace.py finds the value a name holds at the cursor's line (first probe, first program); this
module describes it: shape, dtype, the tensor and coordinates its lanes carry (as ranges per
dimension), masked lanes, and for pointers which tensor they address.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from argus.analyzers.interp.softmax import Inverse
from argus.analyzers.interp.tags import varies
from argus.analyzers.interp.values import Ptr, TensorInfo, Val


def _span_text(arr: np.ndarray) -> str:
    vals = arr[~np.isnan(arr)] if arr.dtype.kind == "f" else arr.reshape(-1)
    if vals.size == 0:
        return "none (all lanes masked)"
    lo, hi = int(vals.min()), int(vals.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _axes(arr: np.ndarray) -> str:
    along = [str(ax) for ax in range(arr.ndim) if varies(arr, ax)]
    return f" along axis {', '.join(along)}" if along else ""


def unstated_extent(t: TensorInfo) -> str:
    """The assumption behind a tensor whose extents the launcher does not state (issue 12's
    rule 1): its shape here is a stand-in, so nothing that depends on it is judged."""
    return (
        f"- the launcher does not state the extents of `{t.name}`: the shape shown is a stand-in, "
        "and its bounds (MB001/MB002), coverage (GR001) and races (GR002) are not judged"
    )


def unjudged_bounds(t: TensorInfo) -> str:
    """Why a tensor of known shape still has its bounds left unjudged (L2, L6): the reason the
    binder gave, e.g. a launcher value it could not compute."""
    return (
        f"- the bounds (MB001/MB002), coverage (GR001) and races (GR002) of `{t.name}` are not "
        f"judged: {t.bounds_unjudged}"
    )


def describe_value(name: str, v: Any, sizes: str, pid: tuple[int, ...]) -> str:
    head = f"**{name}**"
    where = f"\n\n_at {sizes}, program_id={pid if len(pid) > 1 else pid[0]}_"
    if isinstance(v, Ptr):
        t = v.tensor
        coords, valid = t.unravel(np.asarray(v.offsets))
        dims = ", ".join(
            f"{s}: {_span_text(np.where(valid, coords[..., d], np.nan).astype(float))}"
            for d, s in enumerate(t.symbols)
        )
        unsized = (
            "\n" + unjudged_bounds(t)
            if t.bounds_unjudged
            else "\n" + unstated_extent(t)
            if not t.sized
            else ""
        )
        return (
            f"{head}: pointer tile {tuple(v.offsets.shape)} into `{t.name}` {tuple(t.shape)}"
            f"\n\n- addresses {dims}{unsized}{where}"
        )
    if isinstance(v, Val):
        lines = [f"{head}: {'scalar' if v.is_scalar else 'tile ' + str(tuple(v.shape))} of {v.dtype}"]
        if v.is_scalar and not v.tags:
            lines.append(f"- value {v.item()}")
        for k, arr in v.tags.items():
            lines.append(
                f"- {k} = {_span_text(np.asarray(arr, dtype=float))}{_axes(np.asarray(arr, dtype=float))}"
                + (" (through a loaded index)" if k in v.index_tags else "")
            )
        if v.undef is not None and np.any(v.undef):
            lines.append(f"- {int(np.sum(v.undef))} lanes undefined (masked load without `other=`)")
        if v.pad is not None and np.any(v.pad):
            lines.append(f"- {int(np.sum(v.pad))} lanes outside the data (masked, filled with `other=`)")
        if v.dtype == "int1" and not v.is_scalar:
            lines.append(f"- {int(np.sum(v.data))} of {v.data.size} lanes true")
        if v.grows and v.dtype.startswith(("int", "uint")) and v.dtype != "int1":
            lines.append("- grows with the problem size" + (" (int32)" if v.dtype == "int32" else ""))
        if isinstance(v.scale, Inverse):
            lines.append("- the reciprocal of a sum relative to a running max (online softmax scale tag)")
        elif v.scale is not None and v.scale != "any":
            lines.append("- relative to a running max (online softmax scale tag)")
        return "\n".join(lines) + where
    if isinstance(v, TensorInfo):
        return f"{head}: tensor `{v.name}` of shape {v.shape}{where}"
    return f"{head}: {type(v).__name__}"
