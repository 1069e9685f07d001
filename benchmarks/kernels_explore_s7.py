"""Session 7's exploration call: attention candidates and the new timing method's stability, one device call.

    python benchmarks/kernels_explore_s7.py --out DIR [--budget-s 240] [--part attention,gemm | attention2,gemm2]

attention: on seven benchmark shapes, the launcher's default against layouts not measured before -
one warpgroup per CTA holding a 128-row tile (4 warps, no register cap: two CTAs of 128 threads share
an SM, and no CTA barrier couples two warpgroups of one CTA; BLOCK_N 32-64 keeps the score tile small)
and `tl.range(..., warp_specialize=True)` on the host-descriptor kernel. Every variant's output is
checked against cuDNN's before any timing; the correct ones and cuDNN are then timed in ONE interleaved
measurement (benchmarks/kernels_timing.py), so their ratios share warm-up, L2 state and drift.
gemm: the small and skinny rows whose eager ratio moved between runs of identical code, ours against
cuBLAS measured three times each with the interleaved method (eager) and once as graph replays: the
spread of the three is the method's own noise on that row.
attention2 and gemm2 (the second call): the first call's attention winner on the other D128 rows, GQA
ones included; deeper-pipelined tiles for the skinny GEMMs still below cuBLAS.
Writes DIR/explore-s7.json after every shape; the table printed last is what the cards quote.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402
from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

from benchmarks.explore_common import (  # noqa: E402
    attention_rows,
    gemm_inputs,
    gemm_pin_rows,
    gemm_rotation,
    run_parts,
    timed_rows,
)
from benchmarks.kernels import rel_err  # noqa: E402
from benchmarks.kernels_timing import clocks_up, interleaved, interleaved_graphs  # noqa: E402

# (B, H, H_KV, S, D, causal): the rows furthest from cuDNN, both head dims, one long causal row.
ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 4096, 128, False), (4, 32, 32, 1024, 128, True),
               (4, 32, 32, 4096, 128, True), (4, 32, 32, 16384, 128, True), (16, 16, 16, 1024, 64, False),
               (4, 32, 32, 4096, 64, True)]
# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK, MAXNREG, WARP_SPEC) per head dim; warp-specialized
# ones last (a compiler crash there must not cost the others' numbers).
CANDIDATES = {
    128: [(128, 64, 4, 2, False, None, False), (128, 32, 4, 3, False, None, False),
          (128, 32, 4, 4, False, None, False), (128, 128, 8, 2, False, None, True),
          (128, 64, 8, 3, False, None, True), (128, 64, 8, 2, False, 128, True)],
    64: [(128, 64, 4, 3, False, None, False), (128, 128, 4, 2, False, None, False),
         (128, 32, 4, 4, False, None, False), (128, 128, 8, 2, False, None, True),
         (128, 64, 8, 3, False, None, True)],
}
# Second call: the first call's winner (one warpgroup, 128x64 s2) on the remaining D128 rows, against the
# tiles the launcher takes there today, before it is pinned.
ATTN2_SHAPES = [(4, 32, 32, 2048, 128, False), (4, 32, 32, 8192, 128, False), (4, 32, 32, 16384, 128, False),
                (4, 32, 32, 2048, 128, True), (4, 32, 32, 8192, 128, True), (4, 32, 8, 4096, 128, False),
                (4, 32, 8, 4096, 128, True), (4, 32, 8, 16384, 128, True)]
CANDIDATES2 = {128: [(128, 64, 4, 2, False, None, False), (128, 64, 8, 2, False, 128, False),
                     (64, 64, 4, 3, False, None, False)]}
# Second call, GEMM: the skinny rows still below cuBLAS, with the tiles Nsight Compute showed cuBLAS
# using there (kernels-h200-s7a-gemm-ncu.txt: 128x4096x4096 a 64x64 tile, 13 stages, no split; 16x14336x4096
# 16-row tiles, 11 stages; 128x14336x4096 128x128, 6 stages): deeper pipelines than ours, as TUNED
# entries (path, split, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, SUBTILE). A 16-row tile is
# below wgmma's 64 rows, so Triton issues mma.sync there: enough for a row that moves bytes, not FLOPs.
GEMM2 = {
    (128, 4096, 4096): [("tma_host", 1, 64, 64, 64, 4, 10, False), ("tma_host", 1, 64, 64, 64, 4, 12, False),
                        ("tma_host", 1, 64, 64, 128, 4, 6, False), ("splitk_host", 2, 64, 64, 64, 4, 10, False)],
    (16, 14336, 4096): [("tma_host", 1, 16, 128, 128, 4, 6, False), ("tma_host", 1, 16, 128, 64, 4, 10, False),
                        ("tma_host", 1, 32, 128, 128, 4, 5, False), ("tma_host", 1, 64, 128, 64, 4, 6, False)],
    (128, 14336, 4096): [("tma_host", 1, 128, 128, 64, 8, 5, False), ("tma_host", 1, 128, 128, 64, 8, 6, True),
                         ("tma_host", 1, 128, 128, 64, 4, 5, False)],
}
GEMM_SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (16, 4096, 4096), (16, 14336, 4096), (128, 4096, 4096),
               (128, 14336, 4096), (128, 4096, 14336)]


def label(c: tuple) -> str:
    bm, bn, w, st, pipe, cap, ws = c
    return f"{bm}x{bn} w{w} s{st}{' pipe_qk' if pipe else ''}{f' r{cap}' if cap else ''}{' ws' if ws else ''}"


def attention_shape(b: int, h: int, h_kv: int, s: int, d: int, causal: bool,
                    candidates: dict[int, list[tuple]] = CANDIDATES) -> list[dict]:
    variants = [("default", {})] + [(f"host {label(c)}", {"pinned": attn_mod.config(*c[:6], warp_spec=c[6]),
                                                          "host_desc": True}) for c in candidates[d]]
    shape, sides, rows, flops = attention_rows(attn_mod, b, h, h_kv, s, d, causal, variants)
    return rows + timed_rows("attention", shape, sides, flops)


def gemm_shape(m: int, n: int, k: int) -> list[dict]:
    a, b = gemm_inputs(m, n, k)()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm_mod.matmul(a, b, out=out)
    err = rel_err(out, torch.matmul(a, b))
    nxt = gemm_rotation(m, n, k)
    sides = [lambda: gemm_mod.matmul(*nxt()), lambda: torch.matmul(*nxt())]
    eager = [interleaved(sides).ratio(1)[0] for _ in range(3)]
    graph = interleaved_graphs(sides)
    row = {"family": "gemm", "shape": f"{m}x{n}x{k}", "rel_err": err, "eager_ratios": eager,
           "graph_ratio": graph.ratio(1)[0] if graph else None}
    graph_txt = "n/a" if row["graph_ratio"] is None else f"{row['graph_ratio']:.3f}"
    eager_txt = " ".join(f"{r:.3f}" for r in eager)
    print(f"gemm      {row['shape']:20s} err {err:.1e} eager x3 {eager_txt} graph {graph_txt}", flush=True)
    return [row]


def gemm_variants(m: int, n: int, k: int) -> list[dict]:
    """The launcher's plan, each GEMM2 entry and cuBLAS, checked, then timed in one interleaved measurement."""
    sides, rows, _ = gemm_pin_rows(gemm_mod, m, n, k, [None, *GEMM2[(m, n, k)]])
    return rows + timed_rows("gemm", f"{m}x{n}x{k}", sides, 2.0 * m * n * k)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--part", default="attention,gemm")
    ap.add_argument("--budget-s", type=float, default=240.0, help="seconds per part before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    clocks_up()
    jobs = {"attention": (ATTN_SHAPES, attention_shape), "gemm": (GEMM_SHAPES, gemm_shape),
            "attention2": (ATTN2_SHAPES, lambda *shape: attention_shape(*shape, candidates=CANDIDATES2)),
            "gemm2": (list(GEMM2), gemm_variants)}
    rows = run_parts(jobs, args.part, args.budget_s, args.out / "explore-s7.json")
    best: dict[str, dict] = {}
    for r in rows:
        if r["family"] == "attention" and r.get("ms") and r["variant"] != "cuDNN":
            if r["shape"] not in best or r["ms"] < best[r["shape"]]["ms"]:
                best[r["shape"]] = r
    print("\nfastest correct variant per attention shape (ratio = cuDNN ms / variant ms):")
    for shape, r in best.items():
        print(f"  {shape:30s} {r['variant']:34s} {r['ms']:.4f} ms ratio {r['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
