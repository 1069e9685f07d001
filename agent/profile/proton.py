"""Triton Proton profiles (the `.hatchet` JSON tree) and do_bench timings.

Proton attributes GPU time to each Triton kernel by name with little overhead, which makes it a
cross-check of our event timing where ncu's replay is too slow or not permitted.
"""

from __future__ import annotations

import statistics
from typing import Any


def parse_hatchet(tree: Any) -> dict[str, dict[str, float]]:
    """{kernel name: {"count": launches, "time_ns": total, "avg_ns": mean}} from a hatchet tree.

    The tree is a list with one root frame ("ROOT"); each frame has `frame.name`, `metrics` and
    `children`. Leaves are kernels; a name seen at several places in the tree is summed.
    """
    roots = tree if isinstance(tree, list) else [tree]
    out: dict[str, dict[str, float]] = {}

    def visit(node: dict) -> None:
        children = node.get("children") or []
        name = (node.get("frame") or {}).get("name", "")
        if not children and name and name != "ROOT":
            metrics = node.get("metrics") or {}
            time_ns = next((float(v) for k, v in metrics.items() if k.startswith("time") and "ns" in k), None)
            if time_ns is None:
                time_ns = next((float(v) * 1e3 for k, v in metrics.items() if k.startswith("time (us")), 0.0)
            count = float(metrics.get("count", 0) or 0)
            entry = out.setdefault(name, {"count": 0.0, "time_ns": 0.0})
            entry["count"] += count
            entry["time_ns"] += time_ns
        for child in children:
            visit(child)

    for root in roots:
        if isinstance(root, dict):
            visit(root)
    for entry in out.values():
        entry["avg_ns"] = entry["time_ns"] / entry["count"] if entry["count"] else 0.0
    return out


def summarize_times(times_ms: list[float]) -> dict[str, float]:
    """Median, min, max and spread of a list of timings (do_bench's return_mode="all", ours)."""
    if not times_ms:
        return {}
    q = statistics.quantiles(times_ms, n=10) if len(times_ms) >= 2 else [times_ms[0]] * 9
    return {
        "median_ms": statistics.median(times_ms),
        "min_ms": min(times_ms),
        "max_ms": max(times_ms),
        "p10_ms": q[0],
        "p90_ms": q[-1],
        "n": float(len(times_ms)),
    }
