"""ProfileResult: one profile's numbers, as the CLI, the reports and the editor consume them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from argus.agent.profile.roofline import Roofline

#: Keys that writers add to `to_json()`'s dict (the lens line, the CLI's measured hints) and that
#: `from_json` recomputes or ignores rather than stores.
DERIVED_KEYS = frozenset({"lens", "hints"})


@dataclass
class ProfileResult:
    """Time, rates, roofline class and counters of one task on one target."""

    task: str  # "file.py::kernel"
    kernel: str
    target: str
    device: str  # "NVIDIA H200", "CPU (Triton interpreter)"
    backend: str  # nvidia, amd, cpu
    sizes: dict[str, int]
    dtype: str | None
    median_ms: float
    timing: dict[str, float]  # median/min/max/p10/p90/n
    flops: float | None
    bytes: float | None
    flops_source: str | None
    bytes_source: str | None
    roofline: Roofline
    peak: str | None  # the table entry used, e.g. "H200"
    rel_error: float | None = None
    counters: dict[str, Any] | None = None  # parsed summary (ncu or rocprof), or {"error": ...}
    do_bench_ms: float | None = None
    proton: dict[str, Any] | None = None
    env: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def is_cpu(self) -> bool:
        return self.backend == "cpu"

    def lens_text(self) -> str:
        """One line for a code lens: "0.81 ms, 693 TFLOP/s, 70% of H200 peak, compute-bound"."""
        parts = [_fmt_time(self.median_ms)]
        r = self.roofline
        if self.is_cpu:
            parts.append("CPU interpreter, no peaks")
            return ", ".join(parts)
        if r.bound == "memory-bound" and r.tbs is not None:
            parts.append(f"{r.tbs:.2f} TB/s")
        elif r.tflops is not None:
            parts.append(f"{r.tflops:.0f} TFLOP/s" if r.tflops >= 10 else f"{r.tflops:.2f} TFLOP/s")
        elif r.tbs is not None:
            parts.append(f"{r.tbs:.2f} TB/s")
        if r.pct_of_roof is not None and self.peak:
            parts.append(f"{r.pct_of_roof:.0f}% of {self.peak} peak")
        if r.bound != "unknown":
            parts.append(r.bound)
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["roofline"] = self.roofline.to_json()
        data["lens"] = self.lens_text()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProfileResult:
        data = {k: v for k, v in data.items() if k not in DERIVED_KEYS}
        data["roofline"] = Roofline(**data["roofline"])
        return cls(**data)


def _fmt_time(ms: float) -> str:
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    if ms >= 0.01:
        return f"{ms:.3f} ms"
    return f"{ms * 1e3:.1f} us"
