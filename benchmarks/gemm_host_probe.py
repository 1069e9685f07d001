"""Host time per call of our GEMM launcher against cuBLAS's, and whether the benchmark's rows are host-bound.

    python benchmarks/gemm_host_probe.py [--before DIR]

Issue 16, session 9 (gpu8). gpu7's probe (gemm_flush_probe.py) found our `gemm.matmul` costing 13-28 us
more host time a call than torch.matmul where each call was waited for. The hypothesis to test: on the
10-45 us rows of benchmarks/kernels.py the eager timing is host-bound (host time a call >= kernel time,
so the GPU idles between launches), which graph replays remove. Per shape and side, in one process:
- `host`: CPU microseconds a call of a tight loop of N calls with no sync (N below the launch queue's
  depth, so the host never waits for the GPU): the launcher's own cost;
- `eager`: GPU microseconds a call of the same loop, events around it, the GPU idle at its start: the
  larger of host and kernel time when calls follow each other;
- `busy`: the same loop queued behind a 50 ms sleep kernel, so every launch is queued before the GPU
  reaches it: the kernels back to back, no launch gaps;
- `bench`: the benchmark's loop (benchmarks/kernels_timing.py: a 256 MB flush, start event, call, end
  event) for the three sides interleaved: the median event time a call, and host / GPU microseconds an
  iteration of the loop (host < GPU: the host runs ahead and its cost stays out of the rows).
Sides: torch.matmul (cuBLAS), this branch's `gemm.matmul`, and with --before the launcher of gpu7
(DIR holds its knowledge/kernels/{gemm,gemm_splitk,_common}.py with their imports renamed to
before_gemm_splitk / before_common, copied there with `git show gpu7:...` before the call).
Correctness first: each side's output on fresh inputs against the fp32 reference, and this branch's
output equal to gpu7's bit for bit (same kernels and configs, only the launch changed).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402
from argus.knowledge.kernels._desc_launch import DescLaunch  # noqa: E402

from benchmarks.kernels import rotation  # noqa: E402
from benchmarks.kernels_timing import FLUSH_BYTES, clocks_up  # noqa: E402

SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (16, 4096, 4096), (16, 14336, 4096), (16, 4096, 14336),
          (128, 4096, 4096), (128, 14336, 4096), (128, 4096, 14336), (4096, 4096, 4096)]
CALLS = 300  # below the launch queue's 1024 entries
SLEEP_CYCLES = 100_000_000  # ~50 ms at the H200's 1.98 GHz: longer than CALLS launches take to queue


def load_before(folder: Path) -> ModuleType:
    """gpu7's launcher as separate modules (their own autotuners and plan caches)."""
    mod = None
    for name in ("_common", "gemm_splitk", "gemm"):
        mod_name = "before_" + name.lstrip("_")
        spec = importlib.util.spec_from_file_location(mod_name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
    return mod


def host_us(fn: Callable[[], object]) -> float:
    """Median over 5 trials of CPU us a call of CALLS calls with no sync inside."""
    trials = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        trials.append((time.perf_counter() - t0) / CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(trials)


def gpu_us(fn: Callable[[], object], busy: bool) -> float:
    """Median over 5 trials of GPU us a call of CALLS calls; busy: queued behind a sleep kernel."""
    trials = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        if busy:
            torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        for _ in range(CALLS):
            fn()
        end.record()
        end.synchronize()
        trials.append(start.elapsed_time(end) / CALLS * 1e3)
    return statistics.median(trials)


def bench_loop(sides: list[Callable[[], object]], flush: torch.Tensor, reps: int = 300) -> list[tuple]:
    """The benchmark's interleaved loop; per side (median event us, host us an iteration, GPU us an iteration)."""
    n = len(sides)
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
          for _ in range(n)]
    torch.cuda.synchronize()
    first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first.record()
    t0 = time.perf_counter()
    for i in range(reps):
        for j in (range(n) if i % 2 == 0 else range(n - 1, -1, -1)):
            flush.zero_()
            ev[j][i][0].record()
            sides[j]()
            ev[j][i][1].record()
    host = (time.perf_counter() - t0) / reps * 1e6
    last.record()
    torch.cuda.synchronize()
    gpu = first.elapsed_time(last) / reps * 1e3
    return [(statistics.median(s.elapsed_time(e) for s, e in ev[j]) * 1e3, host, gpu) for j in range(n)]


def direct_plans() -> str:
    """How many of this branch's GEMM plans launch through DescLaunch's direct path (of those with one)."""
    found = direct = 0
    for plan in gemm_mod._PLANS.values():
        for cell in plan.__closure__ or ():
            if isinstance(cell.cell_contents, DescLaunch):
                found += 1
                direct += bool(cell.cell_contents.direct)
    return f"{direct}/{found}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, default=None)
    args = ap.parse_args()
    before = load_before(args.before) if args.before else None
    clocks_up()
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    names = ["cuBLAS", "ours"] + (["gpu7"] if before else [])
    rows = []
    for m, n, k in SHAPES:
        def make(m=m, n=n, k=k) -> tuple:
            return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                    torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

        fns = [torch.matmul, gemm_mod.matmul] + ([before.matmul] if before else [])
        a, b = make()
        ref = gemm_mod.reference(a, b).float()
        outs = [f(a, b) for f in fns]
        errs = [float((o.float() - ref).norm() / ref.norm()) for o in outs]
        same = "-" if before is None else str(torch.equal(outs[1], outs[2]))
        label = f"{m}x{n}x{k}"
        print(f"check {label:18s} rel err " + " ".join(f"{nm} {e:.1e}" for nm, e in zip(names, errs, strict=True))
              + f"  ours==gpu7 bitwise: {same}", flush=True)
        if any(not e < 1e-2 for e in errs):
            print(f"FAILED correctness on {label}")
            return 1
        a, b = make()  # the second call of each side: plans built, launches on their fast paths
        ref = gemm_mod.reference(a, b).float()
        outs = [f(a, b) for f in fns]
        errs = [float((o.float() - ref).norm() / ref.norm()) for o in outs]
        same = "-" if before is None else str(torch.equal(outs[1], outs[2]))
        print(f"check {label:18s} rel err " + " ".join(f"{nm} {e:.1e}" for nm, e in zip(names, errs, strict=True))
              + f"  ours==gpu7 bitwise: {same}  (second call)", flush=True)
        if any(not e < 1e-2 for e in errs):
            print(f"FAILED correctness on {label}")
            return 1
        nxt = rotation(make, 2 * (m * k + k * n + m * n))
        sides = [lambda f=f, nxt=nxt: f(*nxt()) for f in fns]
        for f in sides:
            for _ in range(50):
                f()
        measured = [(host_us(f), gpu_us(f, False), gpu_us(f, True)) for f in sides]
        bench = bench_loop(sides, flush)
        for nm, (h, e, bz), (ev, hi, gi) in zip(names, measured, bench, strict=True):
            rows.append((label, nm, h, e, bz, ev, hi, gi))
            print(f"{label:18s} {nm:7s} host {h:6.1f}  eager {e:7.2f}  busy {bz:7.2f}  bench {ev:7.2f}  "
                  f"(loop: host {hi:6.1f} / GPU {gi:6.1f} us an iteration)", flush=True)
    print(f"\nplans on DescLaunch's direct path: {direct_plans()}")
    print("\n| shape | side | host us/call | eager us/call | busy us/call | bench us/call | bench loop host / GPU us/iter |")
    print("|---|---|---|---|---|---|---|")
    for label, nm, h, e, bz, ev, hi, gi in rows:
        print(f"| {label} | {nm} | {h:.1f} | {e:.2f} | {bz:.2f} | {ev:.2f} | {hi:.1f} / {gi:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
