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
import json
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402
from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

from benchmarks.kernels import rel_err, rotation  # noqa: E402
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
    from torch.nn.attention import SDPBackend, sdpa_kernel

    shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"
    gqa = h != h_kv

    def make() -> tuple:
        return tuple(torch.randn(b, hh, s, d, device="cuda", dtype=torch.bfloat16) for hh in (h, h_kv, h_kv))

    nxt = rotation(make, 2 * (2 * b * h * s * d + 2 * b * h_kv * s * d))
    q, k, v = make()

    def cudnn(qq: torch.Tensor, kk: torch.Tensor, vv: torch.Tensor) -> torch.Tensor:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal, enable_gqa=gqa)

    ref = cudnn(q, k, v)
    sides = [("cuDNN", lambda: cudnn(*nxt()))]
    rows: list[dict] = []
    variants = [("default", {})] + [(f"host {label(c)}", {"pinned": attn_mod.config(*c[:6], warp_spec=c[6]),
                                                          "host_desc": True}) for c in candidates[d]]
    for name, kw in variants:
        t0 = time.time()
        try:
            got = attn_mod.attention(q, k, v, causal=causal, **kw)
            torch.cuda.synchronize()
            err = rel_err(got, ref)
            note = "" if err < 2e-2 else f"WRONG rel err {err:.1e}"
        except Exception as exc:  # a config that does not compile or fit is reported, not fatal
            torch.cuda.synchronize()
            err, note = None, f"ERR {type(exc).__name__}: {str(exc)[:100]}"
        print(f"  check {shape:30s} {name:34s} err {err if err is None else f'{err:.1e}'} {note} "
              f"({time.time() - t0:.0f}s)", flush=True)
        if note:
            rows.append({"family": "attention", "shape": shape, "variant": name, "ms": None, "note": note})
            continue
        sides.append((name, lambda kw=kw: attn_mod.attention(*nxt(), causal=causal, **kw)))
    timing = interleaved([fn for _, fn in sides])
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    for i, (name, _) in enumerate(sides):
        ratio = timing.median[0] / timing.median[i]
        rows.append({"family": "attention", "shape": shape, "variant": name, "ms": timing.median[i],
                     "ratio": ratio, "even_odd": timing.ratio(0, i)[1:], "tflops": flops / timing.median[i] / 1e9,
                     "note": ""})
        print(f"attention {shape:30s} {name:34s} {timing.median[i]:9.4f} ms ratio {ratio:.3f} "
              f"({flops / timing.median[i] / 1e9:.0f} TFLOP/s)", flush=True)
    return rows


def gemm_shape(m: int, n: int, k: int) -> list[dict]:
    def make() -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    a, b = make()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm_mod.matmul(a, b, out=out)
    err = rel_err(out, torch.matmul(a, b))
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
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

    def make() -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    shape = f"{m}x{n}x{k}"
    a, b = make()
    ref = torch.matmul(a, b)
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    sides = [("cuBLAS", lambda: torch.matmul(*nxt()))]
    rows: list[dict] = []
    for entry in [None, *GEMM2[(m, n, k)]]:
        name = "default" if entry is None else " ".join(str(x) for x in entry)
        try:
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            choice = None if entry is None else gemm_mod.pinned_config(entry)
            plan = gemm_mod.make_plan(a, b, out, choice=choice)
            torch.cuda.synchronize()
            err = rel_err(out, ref)
            note = "" if err < 1e-2 else f"WRONG rel err {err:.1e}"
        except Exception as exc:  # a config that does not compile or fit is reported, not fatal
            torch.cuda.synchronize()
            note = f"ERR {type(exc).__name__}: {str(exc)[:100]}"
        print(f"  check {shape:20s} {name:44s} {note or 'ok'}", flush=True)
        if note:
            rows.append({"family": "gemm", "shape": shape, "variant": name, "ms": None, "note": note})
            continue

        def call(plan=plan) -> torch.Tensor:
            x, y = nxt()
            o = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
            plan(x, y, o)
            return o

        sides.append((name, call))
    timing = interleaved([fn for _, fn in sides])
    for i, (name, _) in enumerate(sides):
        ratio = timing.median[0] / timing.median[i]
        rows.append({"family": "gemm", "shape": shape, "variant": name, "ms": timing.median[i], "ratio": ratio,
                     "even_odd": timing.ratio(0, i)[1:], "note": ""})
        print(f"gemm      {shape:20s} {name:44s} {timing.median[i]:9.4f} ms ratio {ratio:.3f}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--part", default="attention,gemm")
    ap.add_argument("--budget-s", type=float, default=240.0, help="seconds per part before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    clocks_up()
    rows: list[dict] = []
    jobs = {"attention": (ATTN_SHAPES, attention_shape), "gemm": (GEMM_SHAPES, gemm_shape),
            "attention2": (ATTN2_SHAPES, lambda *shape: attention_shape(*shape, candidates=CANDIDATES2)),
            "gemm2": (list(GEMM2), gemm_variants)}
    for part in args.part.split(","):
        shapes, run = jobs[part]
        start = time.time()
        for shape in shapes:
            if time.time() - start > args.budget_s:
                print(f"SKIP {part} {shape}: budget spent", flush=True)
                continue
            rows += run(*shape)
            torch.cuda.empty_cache()
            (args.out / "explore-s7.json").write_text(json.dumps(rows, indent=1))
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
