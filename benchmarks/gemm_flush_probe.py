"""Why the skinny GEMMs read 0.98-0.99x of cuBLAS in the benchmark while Nsight Compute has ours as fast or faster.

    python benchmarks/gemm_flush_probe.py

Session 8 and 9's profiles (kernels-h200-gemm-ncu.txt) put our kernel at or under cuBLAS's duration on
128x4096x4096 (12.80 against 13.98 us), 128x14336x4096 and 16x14336x4096, while the interleaved timing
of benchmarks/kernels_timing.py reads 0.98-0.995 for them. That timing writes 256 MB (`zero_`) before
every call, so each call starts with the L2 full of dirty lines, and the write may still be draining
when the call starts. Here, per shape, ours and cuBLAS in one interleaved loop under four preludes:
- `write`: the benchmark's (zero_ of 256 MB, then the call);
- `read`: a 256 MB read instead (sum into one value), so the L2 holds clean lines of another buffer;
- `write+sync`: the write, then the host waits for it, so no call overlaps its drain (the host's
  launch latency is then inside the timed region for both sides);
- `none`: nothing; the inputs still rotate over more than twice the L2.
Ratios are cuBLAS ms / ours ms of the medians (>1: ours faster). One line per shape and prelude.
Each repetition waits for its call (`end.synchronize()`), so the host cannot run ahead as it does in the
benchmark's loop: where the prelude is short or absent, the time between the start event and the
kernel holds the host's launch cost. What it showed (2026-12-02, kernels-h200-gemm-flush-probe-s9.txt):
mostly that cost, ours 13-28 us more a call than cuBLAS's (`none`: 128x4096x4096 43.3 against 30.3 us,
1024^3 85.4 against 57.8); with `write` it is hidden on the rows of 40 us and more (128x14336x4096 0.988,
4096^3 0.996), not on 1024^3 (0.251). The L2-state question is not separated by this design.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

from benchmarks.kernels import rotation  # noqa: E402
from benchmarks.kernels_timing import FLUSH_BYTES, clocks_up  # noqa: E402

SHAPES = [(128, 4096, 4096), (128, 14336, 4096), (16, 14336, 4096), (1024, 1024, 1024), (4096, 4096, 4096)]


def loop(sides: list[Callable[[], object]], prelude: Callable[[], object], reps: int) -> list[float]:
    """Median ms per side; repetitions alternate the order of the sides, the prelude before each call."""
    times: list[list[float]] = [[] for _ in sides]
    for fn in sides:
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    for i in range(reps):
        for j in (range(len(sides)) if i % 2 == 0 else range(len(sides) - 1, -1, -1)):
            prelude()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            sides[j]()
            end.record()
            end.synchronize()
            times[j].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def main() -> int:
    clocks_up()
    buf = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    fbuf = torch.ones(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
    preludes = {
        "write": lambda: buf.zero_(),
        "read": lambda: fbuf.sum(),
        "write+sync": lambda: (buf.zero_(), torch.cuda.synchronize()),
        "none": lambda: None,
    }
    for m, n, k in SHAPES:
        def make(m=m, n=n, k=k) -> tuple:
            return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                    torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

        nxt = rotation(make, 2 * (m * k + k * n + m * n))
        a, b = nxt()
        err = float((gemm_mod.matmul(a, b).float() - torch.matmul(a, b).float()).norm() / torch.matmul(a, b).float().norm())
        sides = [lambda nxt=nxt: torch.matmul(*nxt()), lambda nxt=nxt: gemm_mod.matmul(*nxt())]
        for name, prelude in preludes.items():
            base, ours = loop(sides, prelude, 400 if m * n * k < 2**34 else 150)
            print(f"{m}x{n}x{k:<6d} {name:10s} cuBLAS {base * 1e3:8.2f} us  ours {ours * 1e3:8.2f} us  "
                  f"ratio {base / ours:.3f}  (rel err {err:.1e})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
