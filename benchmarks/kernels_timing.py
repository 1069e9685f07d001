"""Timing ours against a library in one interleaved measurement (the method of benchmarks/kernels.py).

Why not one do_bench per side: on 10-25 us kernels the ratio of two back-to-back do_bench calls moved
by up to 30% between runs of identical code (kernels-h200-s6.md, session 6: 1024^3 0.43 / 1.05 / 0.71),
always on the side timed first after its plan was built. Here every side gets the same treatment:
- a warm-up per row: each side runs for `warmup_ms` right before the timed loop (clocks up, plans
  built, autotuning and compilation done), not only the first row of the run;
- interleaved repetitions: repetition i times every side once, in the order A B C ... on even i and
  the reverse on odd i, so drift of clocks or host load over the loop falls on all sides alike;
- the same L2 state: the L2 is flushed (a 256 MB write) before every timed call of every side, and
  each side's inputs come from the caller's rotation;
- the same launch method: eager calls for all sides (`interleaved`), or one CUDA graph per side
  replayed in the same interleaved order (`interleaved_graphs`);
- medians over many repetitions (at least `min_reps`), and the ratio of the medians of the even and of
  the odd repetitions kept apart, so the table can say how far two halves of one measurement agree.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch

FLUSH_BYTES = 256 * 2**20  # four times the H200's 60 MB L2, what triton.testing.do_bench writes too


class Timing:
    """Per side: the median ms over all repetitions and over the even and the odd ones apart."""

    def __init__(self, samples: list[list[float]]) -> None:
        self.samples = samples
        self.median = [statistics.median(s) for s in samples]
        self.even = [statistics.median(s[0::2]) for s in samples]
        self.odd = [statistics.median(s[1::2]) for s in samples]

    def ratio(self, base: int, ours: int = 0) -> tuple[float, float, float]:
        """base / ours time over all repetitions, the even ones and the odd ones."""
        return (self.median[base] / self.median[ours], self.even[base] / self.even[ours],
                self.odd[base] / self.odd[ours])

    def spread(self, side: int) -> tuple[float, float]:
        """The 20th and 80th percentile ms of one side."""
        qs = statistics.quantiles(self.samples[side], n=5)
        return qs[0], qs[3]


def clocks_up(seconds: float = 2.0) -> None:
    """Keep the GPU busy with large matmuls for `seconds` before a sweep, so the first rows are
    not timed while the clocks are still rising from idle."""
    warm = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + seconds
    while time.time() < t_end:
        torch.matmul(warm, warm)
        torch.cuda.synchronize()
    del warm


def _flush_buffer() -> torch.Tensor:
    return torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")


def _estimate_ms(fn: Callable[[], object], calls: int = 5) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return max(start.elapsed_time(end) / calls, 1e-3)


def _warm_up(fns: Sequence[Callable[[], object]], warmup_ms: float) -> list[float]:
    """Runs every side until it has spent warmup_ms of GPU time; returns each side's ms per call."""
    estimates = []
    for fn in fns:
        fn()
        torch.cuda.synchronize()
        est = _estimate_ms(fn)
        for _ in range(max(1, int(warmup_ms / est))):
            fn()
        torch.cuda.synchronize()
        estimates.append(_estimate_ms(fn))
    return estimates


def _timed_loop(calls: Sequence[Callable[[], object]], reps: int, flush: torch.Tensor) -> Timing:
    n = len(calls)
    starts = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in range(n)]
    ends = [[torch.cuda.Event(enable_timing=True) for _ in range(reps)] for _ in range(n)]
    for i in range(reps):
        for j in (range(n) if i % 2 == 0 else range(n - 1, -1, -1)):
            flush.zero_()
            starts[j][i].record()
            calls[j]()
            ends[j][i].record()
    torch.cuda.synchronize()
    return Timing([[s.elapsed_time(e) for s, e in zip(starts[j], ends[j], strict=True)] for j in range(n)])


def _reps(estimates: list[float], rep_ms: float, min_reps: int, max_reps: int) -> int:
    per_round = sum(estimates) + 0.1 * len(estimates)  # each call also waits for its ~0.1 ms flush
    return max(min_reps, min(max_reps, int(rep_ms / per_round)))


def interleaved(fns: Sequence[Callable[[], object]], warmup_ms: float = 30.0, rep_ms: float = 300.0,
                min_reps: int = 40, max_reps: int = 3000) -> Timing:
    """Eager calls of every side, interleaved repetition by repetition (see the module docstring)."""
    flush = _flush_buffer()
    estimates = _warm_up(fns, warmup_ms)
    return _timed_loop(fns, _reps(estimates, rep_ms, min_reps, max_reps), flush)


def capture(fn: Callable[[], object]) -> torch.cuda.CUDAGraph:
    """One call of fn as a CUDA graph, captured on the side stream that ran fn eagerly just before: plans
    that the kernels' launchers key by stream (gemm.matmul's) are built outside the capture."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        fn()
    torch.cuda.synchronize()
    return graph


def interleaved_graphs(fns: Sequence[Callable[[], object]], warmup_ms: float = 20.0, rep_ms: float = 200.0,
                       min_reps: int = 40, max_reps: int = 3000) -> Timing | None:
    """Each side captured once as a CUDA graph, the replays timed interleaved with the L2 flushed before
    each: the kernels' time without Python's launch cost. None when a side cannot be captured."""
    try:
        graphs = [capture(fn) for fn in fns]
    except Exception:  # a side that syncs or allocates outside the graph pool: no graph column
        torch.cuda.synchronize()
        return None
    replays = [g.replay for g in graphs]
    return interleaved(replays, warmup_ms, rep_ms, min_reps, max_reps)
