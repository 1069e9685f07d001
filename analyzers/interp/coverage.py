"""Reduction coverage: how often each contraction index entered a value (`tl.dot` and sums
over a loop), merged through arithmetic and recorded per stored element (DF003 compares it with
the extent of the reduced dimension once all programs ran).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp.values import TensorInfo, Val

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


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
    out["counts"] = a["counts"] + b["counts"]
    out["direct"] = a.get("direct", False) and b.get("direct", False)
    return out


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
        interp.mem.coverage[key] = [
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
        ]
    else:
        entry[0] = entry[0] + cover["counts"]
        entry[8] = False  # written more than once: the sum of several programs' parts
