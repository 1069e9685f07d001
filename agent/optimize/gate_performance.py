"""Gate 3, performance: speedup over the user's kernel on the served shapes, and % of the roofline.

The worker times with CUDA events (median of many runs, L2 flushed, inputs rotated). A candidate passes
when its geometric-mean speedup over the user's kernel is at least MIN_GAIN; a time faster than the
roofline allows (more than ROOF_SLACK above 100%) is refused as a measurement bug, never rewarded.
Without a GPU nothing is measured: the gate reports `measured=False` and does not pass.
"""

from __future__ import annotations

import math

from argus.agent.optimize.gate_correctness import served_shape_names, shape_entry
from argus.agent.optimize.runners import RunOutcome
from argus.agent.optimize.types import Candidate, GateResult
from argus.agent.profile.peaks import find_peak
from argus.agent.profile.roofline import classify
from argus.agent.task import Task

MIN_GAIN = 1.02  # below 2% a "speedup" is within run-to-run noise on one GPU
ROOF_SLACK = 5.0  # percent above the roofline tolerated for peak-table rounding


def timing_request(task: Task, base: dict, candidate: Candidate | None, *, compare: list[str], baseline: bool) -> dict:
    return {
        **base,
        "candidate_source": candidate.source if candidate else None,
        "check_shapes": [],
        "time_shapes": [shape_entry(task, n) for n in served_shape_names(task)],
        "time_baseline": baseline,
        "compare": compare,
    }


def roofline_pct(ms: float, row: dict, device: str, dtype: str) -> float | None:
    peak = find_peak(device or "")
    if peak is None or not ms:
        return None
    roof = classify(ms * 1e-3, row.get("flops"), row.get("bytes"), peak, dtype)
    return roof.pct_of_roof


def geomean(values: list[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def verdict(rows: list[dict], baseline: dict[str, float], device: str, dtype: str) -> GateResult:
    """Gate 3 from timing rows (candidate_ms per shape) and the user's kernel's times."""
    speedups, pcts, table = [], [], []
    for row in rows:
        if "candidate_ms" not in row:
            return GateResult("performance", False, f"shape {row['shape']}: {row.get('candidate_error', 'not timed')}")
        base_ms = baseline.get(row["shape"]) or row.get("baseline_ms")
        pct = roofline_pct(row["candidate_ms"], row, device, dtype)
        if pct is not None and pct > 100 + ROOF_SLACK:
            return GateResult("performance", False,
                              f"shape {row['shape']}: {pct:.0f}% of the roofline is impossible: a measurement bug, refused",
                              details={"rows": rows})
        sp = base_ms / row["candidate_ms"] if base_ms else None
        speedups.append(sp)
        pcts.append(pct)
        table.append({"shape": row["shape"], "sizes": row.get("sizes"), "candidate_ms": row["candidate_ms"],
                      "baseline_ms": base_ms, "speedup": sp, "pct_roofline": pct,
                      **{k: v for k, v in row.items() if k.endswith("_ms") and k not in ("candidate_ms", "baseline_ms")}})
    sp = geomean([s for s in speedups if s])
    pct = geomean([p for p in pcts if p]) if any(pcts) else None
    details = {"rows": table, "speedup": sp, "pct_roofline": pct}
    if sp is None:
        return GateResult("performance", False, "no speedup could be computed", details=details)
    if sp < MIN_GAIN:
        return GateResult("performance", False, f"speedup {sp:.3f}x over the user's kernel is below {MIN_GAIN}x",
                          feedback=[{"code": "SLOWER", "message": f"geomean speedup {sp:.3f}x"}], details=details)
    return GateResult("performance", True, f"{sp:.3f}x", details=details)


def from_outcome(outcome: RunOutcome, baseline: dict[str, float], dtype: str) -> GateResult:
    failure = outcome.failure()
    if failure:
        return GateResult("performance", False, f"did not run: {failure}")
    return verdict(outcome.result.get("timing", []), baseline, outcome.env.get("name", ""), dtype)


def unmeasured() -> GateResult:
    return GateResult("performance", False, "not measured: no GPU (gates 1 and 2 ran under the Triton interpreter)",
                      measured=False)
