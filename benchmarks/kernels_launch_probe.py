"""Where the small GEMMs' eager time goes: launcher overhead, output allocation, or the kernel (one device call).

    python benchmarks/kernels_launch_probe.py

Session 6's first benchmark run timed 1024^3 at 22.4 us through `matmul` (CUDA-graph replays 6.3 us,
cuBLAS 9.6 us eager) while the sweep before it had 9.2 us for the same pinned config; the second run had
2048^3 at 37.7 us (graphs 0.98x of cuBLAS). The two differ in how they call: the benchmark lets
`matmul` allocate each output (`matmul(a, b)`), the sweep reuses one output through the plan. This
checks fresh-output calls against torch.matmul, then times, for 1024^3, 2048^3 and 128x4096x4096 with
fresh inputs rotated past the L2 like benchmarks/kernels.py: `matmul(a, b)`, `matmul(a, b, out=fixed)`,
the plan closure alone, a pinned BLOCK_K 64 config, cuBLAS, and the Python cost of one call measured on
the host clock with the GPU queue kept full. Prints one line per variant. Outputs:
benchmarks/results/kernels-h200-launch-probe-before.txt (descriptors cached by base pointer) and
kernels-h200-launch-probe.txt (built once per plan and re-pointed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

from benchmarks.kernels import bench, bench_graph, rotation  # noqa: E402


def host_us_per_call(fn: object, calls: int = 2000) -> float:
    """Host microseconds per call of fn, the GPU kept busy (so the queue never stalls the host)."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def probe(m: int, n: int, k: int) -> None:
    def make() -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / k ** 0.5)

    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    fixed = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
    a, b = make()
    gemm_mod.matmul(a, b)
    worst = max(float((gemm_mod.matmul(*ab).float() - torch.matmul(*ab).float()).norm()
                      / torch.matmul(*ab).float().norm()) for ab in (nxt() for _ in range(6)))
    print(f"{m}x{n}x{k:<6d} fresh outputs, 6 rotated inputs: worst rel err {worst:.1e}", flush=True)
    plan = gemm_mod.make_plan(a, b, fixed)
    entry = gemm_mod.TUNED.get((m, n, k))
    variants = {
        "matmul(a, b) (benchmark's call)": lambda: gemm_mod.matmul(*nxt()),
        "matmul(a, b, out=fixed)": lambda: gemm_mod.matmul(*nxt(), out=fixed),
        "plan closure, fixed out": lambda: plan(*nxt(), fixed),
        "cuBLAS torch.matmul": lambda: torch.matmul(*nxt()),
    }
    if entry is not None and entry[4] == 128:
        bk64 = gemm_mod.make_plan(a, b, fixed, choice=gemm_mod.pinned_config(entry[:4] + (64,) + entry[5:]))
        variants["pinned BLOCK_K 64, fixed out"] = lambda: bk64(*nxt(), fixed)
    for label, fn in variants.items():
        eager = bench(fn)
        eager2 = bench(fn)
        graph = bench_graph(fn)
        host = host_us_per_call(fn)
        print(f"{m}x{n}x{k:<6d} {label:36s} eager {eager * 1e3:7.1f} us (again {eager2 * 1e3:7.1f})  "
              f"graph {graph * 1e3 if graph else float('nan'):7.1f} us  host {host:6.1f} us/call", flush=True)


def main() -> int:
    warm = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + 2.0
    while time.time() < t_end:
        torch.matmul(warm, warm)
        torch.cuda.synchronize()
    del warm
    for shape in ((1024, 1024, 1024), (2048, 2048, 2048), (128, 4096, 4096)):
        probe(*shape)
    return 0


if __name__ == "__main__":
    sys.exit(main())
