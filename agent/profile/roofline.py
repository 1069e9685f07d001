"""The roofline: achieved rates, percent of the binding roof, and the bound class.

Why a separate module: the agent's performance gate uses the same arithmetic to reject a
"speedup" the roofline says is impossible, so it must not depend on how a profile was taken.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from argus.agent.profile.peaks import Peak

#: Below this fraction of the binding roof a kernel is called latency-bound: neither the math
#: units nor memory are busy enough for their ceiling to be what limits it (launch overhead,
#: too few programs, serial dependencies).
LATENCY_FRACTION = 0.15


@dataclass(frozen=True)
class Roofline:
    """Where one measurement sits under one accelerator's roofs."""

    tflops: float | None  # achieved TFLOP/s
    tbs: float | None  # achieved TB/s (counted bytes over time)
    intensity: float | None  # FLOP per byte
    ridge: float | None  # FLOP per byte where the two roofs meet
    peak_tflops: float | None
    peak_tbs: float | None
    pct_compute: float | None  # achieved / peak compute, percent
    pct_memory: float | None  # achieved / peak bandwidth, percent
    pct_of_roof: float | None  # achieved / attainable at this intensity, percent
    bound: str  # "compute-bound", "memory-bound", "latency-bound" or "unknown"

    def to_json(self) -> dict:
        return asdict(self)


def classify(
    time_s: float, flops: float | None, nbytes: float | None, peak: Peak | None, dtype: str
) -> Roofline:
    """Place a kernel that did `flops` and moved `nbytes` in `time_s` under `peak`'s roofs.

    The class follows the intensity: left of the ridge the bandwidth roof binds (memory-bound),
    right of it the compute roof (compute-bound); far under whichever roof binds, latency-bound.
    """
    tflops = flops / time_s / 1e12 if flops and time_s > 0 else None
    tbs = nbytes / time_s / 1e12 if nbytes and time_s > 0 else None
    intensity = flops / nbytes if flops and nbytes else None
    pflops = peak.flops_per_s(dtype) if peak else None
    pbytes = peak.bytes_per_s if peak else None
    peak_tflops = pflops / 1e12 if pflops else None
    peak_tbs = pbytes / 1e12 if pbytes else None
    ridge = pflops / pbytes if pflops and pbytes else None
    pct_c = 100 * tflops / peak_tflops if tflops and peak_tflops else None
    pct_m = 100 * tbs / peak_tbs if tbs and peak_tbs else None

    pct_roof: float | None = None
    bound = "unknown"
    if intensity is not None and ridge is not None:
        attainable = min(pflops, intensity * pbytes)  # FLOP/s
        pct_roof = 100 * flops / time_s / attainable
        bound = "compute-bound" if intensity >= ridge else "memory-bound"
    elif pct_m is not None:  # no FLOP count (a copy, a gather): only the bandwidth roof applies
        pct_roof, bound = pct_m, "memory-bound"
    elif pct_c is not None:
        pct_roof, bound = pct_c, "compute-bound"
    if pct_roof is not None and pct_roof < 100 * LATENCY_FRACTION:
        bound = "latency-bound"
    return Roofline(tflops, tbs, intensity, ridge, peak_tflops, peak_tbs, pct_c, pct_m, pct_roof, bound)
