"""One timed sweep over the reference kernels' variants on the benchmark's weak shapes (one device call).

    python benchmarks/kernels_explore.py --out DIR [--family gemm,attention,moe] [--budget-s 100]

Per shape it times the library baseline and every variant (path, split, config) the way
benchmarks/kernels.py times a row (fresh random inputs rotated past the L2, medians of do_bench), after
checking each variant's output against the baseline's; a variant that fails to compile or is wrong is
listed with the reason and never ranked. Prints one line per variant and, per shape, the fastest
correct variant; writes everything to DIR/explore.json. The winners are what the kernels pin (gemm.TUNED,
attention.ATTN_CONFIGS, moe.GATE_UP_CONFIGS / DOWN_CONFIGS); benchmarks/kernels.py then measures them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402
from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402
from argus.knowledge.kernels import moe as moe_mod  # noqa: E402

from benchmarks.kernels import L2_BYTES, rel_err, rotation, torch_moe  # noqa: E402


def quick_bench(fn: Callable[[], object]) -> float:
    """Median ms; shorter than the benchmark's do_bench so that a sweep fits one call."""
    return float(triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median"))


class Sweep:
    """Collects variant timings per shape and stops starting new shapes once the budget is spent."""

    def __init__(self, out: Path, budget_s: float) -> None:
        self.out, self.budget_s, self.rows = out, budget_s, []
        self.family_start = time.time()

    def spent(self) -> bool:
        return time.time() - self.family_start > self.budget_s

    def record(self, family: str, shape: str, variant: str, ms: float | None, err: float | None,
               note: str = "", base_ms: float | None = None) -> None:
        row = {"family": family, "shape": shape, "variant": variant, "ms": ms, "rel_err": err,
               "note": note, "base_ms": base_ms}
        row["ratio"] = base_ms / ms if ms and base_ms else None
        self.rows.append(row)
        ratio = f"{row['ratio']:.3f}" if row["ratio"] else "-"
        ms_txt = f"{ms:.4f}" if ms is not None else "-"
        print(f"{family:9s} {shape:34s} {variant:48s} {ms_txt:>9s} ms ratio {ratio:>6s} {note}", flush=True)
        (self.out / "explore.json").write_text(json.dumps(self.rows, indent=1))

    def try_variant(self, family: str, shape: str, variant: str, run: Callable[[], torch.Tensor],
                    ref: torch.Tensor, timed: Callable[[], object], tol: float, base_ms: float) -> None:
        if self.spent():
            self.record(family, shape, variant, None, None, "skipped: budget spent", base_ms)
            return
        try:
            got = run()
            torch.cuda.synchronize()
            err = rel_err(got, ref)
            if not err < tol:
                self.record(family, shape, variant, None, err, f"WRONG rel err {err:.1e}", base_ms)
                return
            self.record(family, shape, variant, quick_bench(timed), err, "", base_ms)
        except Exception as exc:  # a config that does not compile or fit is reported, not fatal
            torch.cuda.synchronize()
            self.record(family, shape, variant, None, None, f"ERR {type(exc).__name__}: {str(exc)[:90]}", base_ms)

    def summary(self) -> str:
        best: dict[tuple[str, str], dict] = {}
        for r in self.rows:
            if r["ms"] is None or r["note"] in ("baseline", "stage"):
                continue
            key = (r["family"], r["shape"])
            if key not in best or r["ms"] < best[key]["ms"]:
                best[key] = r
        lines = ["", "fastest correct variant per shape (ratio = baseline ms / variant ms):"]
        for (fam, shape), r in best.items():
            lines.append(f"{fam:9s} {shape:34s} {r['variant']:48s} {r['ms']:.4f} ms ratio {r['ratio']:.3f}")
        return "\n".join(lines)


# ---------------------------------------------------------------- GEMM
GEMM_SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (16, 4096, 4096), (16, 14336, 4096), (16, 4096, 14336),
               (128, 4096, 4096), (128, 14336, 4096), (128, 4096, 14336), (4096, 14336, 4096), (4096, 4096, 14336)]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, SUBTILE) of the persistent kernel.
TMA_SWEEP = [(128, 256, 64, 8, 3, True), (128, 256, 64, 8, 4, True), (256, 128, 64, 8, 3, True),
             (128, 128, 64, 8, 4, False), (128, 128, 64, 4, 3, False), (128, 64, 64, 4, 4, False),
             (64, 128, 64, 4, 4, False), (64, 64, 128, 4, 4, False), (64, 256, 64, 4, 3, False)]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of the split-K kernel.
SPLITK_SWEEP = [(64, 64, 128, 4, 4), (64, 128, 64, 4, 4), (64, 128, 128, 4, 3), (128, 128, 64, 8, 4),
                (128, 64, 64, 4, 5)]


def sweep_gemm(sw: Sweep) -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m, n, k in GEMM_SHAPES:
        if sw.spent():
            sw.record("gemm", f"{m}x{n}x{k}", "skipped", None, None, "budget spent")
        else:
            _gemm_shape(sw, m, n, k, sms)
        torch.cuda.empty_cache()


def _gemm_shape(sw: Sweep, m: int, n: int, k: int, sms: int) -> None:
    def make(m=m, n=n, k=k) -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    shape = f"{m}x{n}x{k}"
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    a, b = make()
    ref = torch.matmul(a, b)
    base = quick_bench(lambda: torch.matmul(*nxt()))
    sw.record("gemm", shape, "cuBLAS", base, 0.0, "baseline", base)
    variants: list[tuple[str, tuple]] = []
    for bm, bn, bk, w, st, sub in TMA_SWEEP:
        if bm <= max(64, triton.next_power_of_2(m)):
            entry = ("tma", 1, bm, bn, bk, w, st, sub)
            variants.append((f"tma {bm}x{bn}x{bk} w{w} s{st}{' sub' if sub else ''}", entry))
    tiles = triton.cdiv(m, 64) * triton.cdiv(n, 64)
    for split in (2, 4, 8):
        if tiles * split > 8 * sms or k // split < 256:
            continue
        for bm, bn, bk, w, st in SPLITK_SWEEP:
            if bm <= max(64, triton.next_power_of_2(m)):
                entry = ("splitk", split, bm, bn, bk, w, st, False)
                variants.append((f"splitk{split} {bm}x{bn}x{bk} w{w} s{st}", entry))
    for label, entry in variants:
        choice = gemm_mod.pinned_config(entry)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        holder: dict = {}

        def run(a=a, b=b, out=out, choice=choice, holder=holder) -> torch.Tensor:
            holder["plan"] = gemm_mod.make_plan(a, b, out, choice=choice)
            return out

        def timed(holder=holder, m=m, n=n) -> None:
            aa, bb = nxt()
            holder["plan"](aa, bb, torch.empty((m, n), device="cuda", dtype=torch.bfloat16))

        sw.try_variant("gemm", shape, label, run, ref, timed, 1e-2, base)


# ---------------------------------------------------------------- attention
ATTN_SHAPES = [(4, 32, 1024, 128, False), (4, 32, 1024, 128, True), (4, 32, 4096, 128, False),
               (4, 32, 4096, 128, True), (16, 16, 1024, 64, False), (4, 32, 4096, 64, True),
               (4, 32, 16384, 128, True), (4, 32, 2048, 128, True), (4, 32, 8192, 128, True),
               (4, 32, 16384, 128, False)]
# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK[, MAXNREG[, PERSISTENT]]). Earlier sweeps:
# kernels-explore-h200-attention.txt (the old pinned configs, PIPE_QK), -2cta.txt (registers capped at
# 128 so that two CTAs share an SM: won every shape), -persistent.txt (the persistent grid: won at S1024
# to S4096, lost at S16384 causal, 0.88 -> 0.77x, when its causal order ran all heads' longest blocks
# together). This one: the persistent causal order in L2-sized head groups, against the two-CTA control.
ATTN_SWEEP_128 = [(128, 64, 8, 2, False, 128), (128, 64, 8, 2, False, 128, True), (64, 64, 4, 3, False, None, True)]
ATTN_SWEEP_64 = [(128, 128, 8, 2, False, 128), (128, 128, 8, 2, False, 128, True), (128, 64, 8, 4, False, None, True)]


def sweep_attention(sw: Sweep) -> None:
    for b, h, s, d, causal in ATTN_SHAPES:
        shape = f"B{b} H{h} S{s} D{d} {'causal' if causal else 'full'}"
        if sw.spent():
            sw.record("attention", shape, "skipped", None, None, "budget spent")
        else:
            _attention_shape(sw, shape, b, h, s, d, causal)
        torch.cuda.empty_cache()


def _attention_shape(sw: Sweep, shape: str, b: int, h: int, s: int, d: int, causal: bool) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel


    def make(b=b, h=h, s=s, d=d) -> tuple:
        return tuple(torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))

    nxt = rotation(make, 2 * 4 * b * h * s * d)
    q, k, v = make()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def base_call(causal=causal) -> torch.Tensor:
        qq, kk, vv = nxt()
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)

    base = quick_bench(base_call)
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    sw.record("attention", shape, f"cuDNN ({flops / base / 1e9:.0f} TFLOP/s)", base, 0.0, "baseline", base)
    for entry in (ATTN_SWEEP_128 if d == 128 else ATTN_SWEEP_64):
        bm, bn, w, st, pipe = entry[:5]
        cap = entry[5] if len(entry) > 5 else None
        pers = len(entry) > 6 and entry[6]
        cfg = attn_mod.config(bm, bn, w, st, pipe, cap)
        label = f"{bm}x{bn} w{w} s{st}{' pipe_qk' if pipe else ''}{f' r{cap}' if cap else ''}{' persistent' if pers else ''}"

        def run(q=q, k=k, v=v, causal=causal, cfg=cfg, pers=pers) -> torch.Tensor:
            return attn_mod.attention(q, k, v, causal=causal, pinned=cfg, persistent=pers)

        def timed(causal=causal, cfg=cfg, pers=pers) -> None:
            attn_mod.attention(*nxt(), causal=causal, pinned=cfg, persistent=pers)

        sw.try_variant("attention", shape, label, run, ref, timed, 2e-2, base)


# ---------------------------------------------------------------- MoE
MOE_SHAPES = [("deepseek", 16, 64, 6, 2048, 1408, False), ("deepseek", 1024, 64, 6, 2048, 1408, False),
              ("mixtral", 1024, 8, 2, 4096, 14336, True), ("deepseek", 128, 64, 6, 2048, 1408, False),
              ("mixtral", 128, 8, 2, 4096, 14336, True), ("mixtral", 4096, 8, 2, 4096, 14336, True)]
# (BLOCK_N, BLOCK_K, num_warps, num_stages, W_TMA)
MOE_SWEEP = [(64, 64, 4, 4, False), (64, 128, 4, 3, False), (128, 64, 4, 4, False), (128, 64, 8, 3, False),
             (64, 64, 4, 4, True), (64, 128, 4, 4, True), (128, 64, 4, 4, True), (128, 128, 8, 3, True),
             (64, 256, 4, 3, True)]


def sweep_moe(sw: Sweep) -> None:
    for name, t, e, top_k, hdim, inter, renorm in MOE_SHAPES:
        shape = f"{name} E{e} top{top_k} T{t}"
        if sw.spent():
            sw.record("moe", shape, "skipped", None, None, "budget spent")
        else:
            _moe_shape(sw, shape, t, e, top_k, hdim, inter, renorm)
        torch.cuda.empty_cache()


def _moe_shape(sw: Sweep, shape: str, t: int, e: int, top_k: int, hdim: int, inter: int, renorm: bool) -> None:

    def make_w(e=e, hdim=hdim, inter=inter) -> tuple:
        return (torch.randn(e, 2 * inter, hdim, device="cuda", dtype=torch.bfloat16) / math.sqrt(hdim),
                torch.randn(e, hdim, inter, device="cuda", dtype=torch.bfloat16) / math.sqrt(inter))

    wsets = [make_w() for _ in range(max(1, math.ceil(2 * L2_BYTES / (2 * e * 3 * hdim * inter))))]
    x = torch.randn(t, hdim, device="cuda", dtype=torch.bfloat16)
    logits = torch.randn(t, e, device="cuda", dtype=torch.float32)
    state = {"i": 0}

    def ws() -> tuple:
        state["i"] = (state["i"] + 1) % len(wsets)
        return wsets[state["i"]]

    ref = torch_moe(x, *wsets[0], logits, top_k, renorm, True)
    base = quick_bench(lambda: torch_moe(x, *ws(), logits, top_k, renorm, True))
    sw.record("moe", shape, "torch._grouped_mm", base, 0.0, "baseline", base)
    bm_default = moe_mod.choose_block_m(t * top_k, e)
    weights, ids = moe_mod.route(logits, top_k, renorm)
    sw.record("moe", shape, "stage: route", quick_bench(lambda: moe_mod.route(logits, top_k, renorm)), None, "stage")
    sw.record("moe", shape, "stage: align torch",
              quick_bench(lambda: moe_mod.align_by_expert(ids, e, bm_default)), None, "stage")
    if t * top_k <= 8192:
        a1 = moe_mod.align_by_expert(ids, e, bm_default)
        a2 = moe_mod.align_fused(ids, e, bm_default)
        same = bool(torch.equal(a1[0], a2[0]) and torch.equal(a1[1], a2[1]))
        sw.record("moe", shape, "stage: align fused", quick_bench(lambda: moe_mod.align_fused(ids, e, bm_default)),
                  None, "stage")
        sw.record("moe", shape, "align fused equals torch" if same else "align fused DIFFERS", None, None, "stage")
    default_up = moe_mod.gemm_config(*moe_mod.GATE_UP_CONFIGS[0])
    default_down = moe_mod.gemm_config(*moe_mod.DOWN_CONFIGS[0])
    sw.try_variant("moe", shape, "autotuned (default launcher)",
                   lambda: moe_mod.fused_moe(x, *wsets[0], logits, top_k, renorm), ref,
                   lambda: moe_mod.fused_moe(x, *ws(), logits, top_k, renorm), 3e-2, base)
    for bm in sorted({bm_default, 64 if bm_default == 128 else bm_default}):
        for which in ("up", "down"):
            for cfg_t in MOE_SWEEP:
                cfg = moe_mod.gemm_config(*cfg_t)
                pinned = (cfg, default_down) if which == "up" else (default_up, cfg)
                label = f"bm{bm} {which} {cfg_t[0]}x{cfg_t[1]} w{cfg_t[2]} s{cfg_t[3]}{' wtma' if cfg_t[4] else ''}"

                def run(pinned=pinned, bm=bm) -> torch.Tensor:
                    return moe_mod.fused_moe(x, *wsets[0], logits, top_k, renorm, pinned=pinned, block_m=bm)

                def timed(pinned=pinned, bm=bm) -> None:
                    moe_mod.fused_moe(x, *ws(), logits, top_k, renorm, pinned=pinned, block_m=bm)

                sw.try_variant("moe", shape, label, run, ref, timed, 3e-2, base)


# ---------------------------------------------------------------- host-built descriptors (session 5)
# The same configs with descriptors built per program on the device (tma, splitk) and on the host
# (tma_host, splitk_host), against the launcher's own choice ("default", what benchmarks/kernels.py runs).
HOST_GEMM_SHAPES = [(1024, 1024, 1024), (128, 4096, 4096), (16, 14336, 4096), (128, 14336, 4096),
                    (128, 4096, 14336), (16, 4096, 4096), (16, 4096, 14336), (2048, 2048, 2048),
                    (4096, 4096, 4096), (4096, 4096, 14336)]
HOST_TMA = [(128, 64, 64, 4, 4, False), (64, 128, 64, 4, 4, False), (64, 64, 128, 4, 4, False),
            (128, 128, 64, 8, 4, False), (128, 256, 64, 8, 4, True)]
HOST_SPLITK = [(64, 128, 64, 4, 4), (64, 128, 128, 4, 3), (128, 64, 64, 4, 5), (128, 128, 64, 8, 4)]


def sweep_gemm_host(sw: Sweep) -> None:
    for m, n, k in HOST_GEMM_SHAPES:
        if sw.spent():
            sw.record("gemm", f"{m}x{n}x{k}", "skipped", None, None, "budget spent")
        else:
            _gemm_host_shape(sw, m, n, k)
        torch.cuda.empty_cache()


def _gemm_host_entries(m: int, n: int, k: int) -> list[tuple[str, tuple | None]]:
    out: list[tuple[str, tuple | None]] = [("default", None)]
    big = m >= 2048
    for bm, bn, bk, w, st, sub in HOST_TMA:
        if bm > max(64, triton.next_power_of_2(m)) or (sub and not big) or (big and bn < 128):
            continue
        for path in ("tma", "tma_host"):
            out.append((f"{path} {bm}x{bn}x{bk} w{w} s{st}{' sub' if sub else ''}", (path, 1, bm, bn, bk, w, st, sub)))
    tiles = triton.cdiv(m, 64) * triton.cdiv(n, 128)
    for split in (2, 4):
        if big or tiles * split > 4 * 132 or k // split < 512:
            continue
        for bm, bn, bk, w, st in HOST_SPLITK:
            if bm > max(64, triton.next_power_of_2(m)):
                continue
            for path in ("splitk", "splitk_host"):
                out.append((f"{path}{split} {bm}x{bn}x{bk} w{w} s{st}", (path, split, bm, bn, bk, w, st, False)))
    return out


def _gemm_host_shape(sw: Sweep, m: int, n: int, k: int) -> None:
    def make(m=m, n=n, k=k) -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    shape = f"{m}x{n}x{k}"
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    a, b = make()
    ref = torch.matmul(a, b)
    base = quick_bench(lambda: torch.matmul(*nxt()))
    sw.record("gemm", shape, "cuBLAS", base, 0.0, "baseline", base)
    for label, entry in _gemm_host_entries(m, n, k):
        choice = None if entry is None else gemm_mod.pinned_config(entry)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        holder: dict = {}

        def run(a=a, b=b, out=out, choice=choice, holder=holder) -> torch.Tensor:
            holder["plan"] = gemm_mod.make_plan(a, b, out, choice=choice)
            return out

        def timed(holder=holder, m=m, n=n) -> None:
            aa, bb = nxt()
            holder["plan"](aa, bb, torch.empty((m, n), device="cuda", dtype=torch.bfloat16))

        sw.try_variant("gemm", shape, label, run, ref, timed, 1e-2, base)


# (B, H, H_KV, S, D, causal) and, per head dim, the configs timed one tile per program with device and host
# descriptors, plus the persistent kernel (device descriptors, built once per program).
HOST_ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 1024, 128, True), (4, 32, 32, 2048, 128, False),
                    (4, 32, 32, 2048, 128, True), (4, 32, 32, 4096, 128, True), (16, 16, 16, 1024, 64, False),
                    (4, 32, 8, 4096, 128, False), (4, 32, 32, 4096, 128, False)]
HOST_ATTN_CFG = {128: [(128, 64, 8, 2, False, 128), (64, 64, 4, 3, False, None)],
                 64: [(128, 128, 8, 2, False, 128)]}


def sweep_attention_host(sw: Sweep) -> None:
    for b, h, h_kv, s, d, causal in HOST_ATTN_SHAPES:
        shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"
        if sw.spent():
            sw.record("attention", shape, "skipped", None, None, "budget spent")
        else:
            _attention_host_shape(sw, shape, b, h, h_kv, s, d, causal)
        torch.cuda.empty_cache()


def _attention_host_shape(sw: Sweep, shape: str, b: int, h: int, h_kv: int, s: int, d: int, causal: bool) -> None:
    variants: list[tuple[str, dict]] = []
    for bm, bn, w, st, pipe, cap in HOST_ATTN_CFG[d]:
        cfg = attn_mod.config(bm, bn, w, st, pipe, cap)
        tag = f"{bm}x{bn} w{w} s{st}{f' r{cap}' if cap else ''}"
        variants.append((f"one-tile device {tag}", {"pinned": cfg, "persistent": False, "host_desc": False}))
        variants.append((f"one-tile host {tag}", {"pinned": cfg, "persistent": False, "host_desc": True}))
        variants.append((f"persistent {tag}", {"pinned": cfg, "persistent": True}))
    _attention_variants(sw, shape, b, h, h_kv, s, d, causal, variants)


# Second call: the autotuned persistent kernel with device against host descriptors on the squares and
# the large shapes, and more tiles for the two shapes still furthest from cuBLAS.
HOST2_GEMM = {(1024, 1024, 1024): [("tma_host", 1, 64, 128, 128, 4, 3, False), ("tma_host", 1, 64, 128, 64, 4, 3, False),
                                   ("tma_host", 1, 64, 128, 64, 8, 4, False), ("tma_host", 1, 128, 64, 128, 4, 3, False),
                                   ("tma_host", 1, 64, 64, 64, 4, 4, False), ("tma_host", 1, 64, 128, 64, 4, 4, False)],
              (128, 4096, 4096): [("splitk_host", 2, 128, 64, 128, 4, 3, False), ("splitk_host", 2, 128, 64, 64, 4, 6, False),
                                  ("splitk_host", 2, 128, 64, 64, 8, 5, False), ("splitk_host", 3, 128, 64, 64, 4, 5, False),
                                  ("splitk_host", 2, 128, 64, 64, 4, 5, False)],
              (4096, 14336, 4096): [("tma_host", 1, 128, 256, 64, 8, 4, True), ("tma", 1, 128, 256, 64, 8, 4, True)],
              (8192, 8192, 8192): [], (16384, 16384, 16384): [], (4096, 4096, 4096): []}


def sweep_gemm_host2(sw: Sweep) -> None:
    for (m, n, k), entries in HOST2_GEMM.items():
        if sw.spent():
            sw.record("gemm", f"{m}x{n}x{k}", "skipped", None, None, "budget spent")
            continue
        variants: list[tuple[str, object]] = []
        if m >= 1024:
            variants += [("autotuned device descriptors", lambda a, b, o: gemm_mod._plan_tma(a, b, o, None)),
                         ("autotuned host descriptors", lambda a, b, o: gemm_mod._plan_tma_host(a, b, o, None))]
        variants.append(("default", lambda a, b, o: gemm_mod.make_plan(a, b, o)))
        for e in entries:
            label = f"{e[0]}{e[1] if e[1] > 1 else ''} {e[2]}x{e[3]}x{e[4]} w{e[5]} s{e[6]}{' sub' if e[7] else ''}"
            variants.append((label, lambda a, b, o, e=e: gemm_mod.make_plan(a, b, o, choice=gemm_mod.pinned_config(e))))
        _gemm_plans(sw, m, n, k, variants)
        torch.cuda.empty_cache()


def _gemm_plans(sw: Sweep, m: int, n: int, k: int, variants: list[tuple[str, object]]) -> None:
    def make(m=m, n=n, k=k) -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    shape = f"{m}x{n}x{k}"
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    a, b = make()
    ref = torch.matmul(a, b)
    base = quick_bench(lambda: torch.matmul(*nxt()))
    sw.record("gemm", shape, "cuBLAS", base, 0.0, "baseline", base)
    scratch = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
    for label, planner in variants:
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        holder: dict = {}

        def run(a=a, b=b, out=out, planner=planner, holder=holder) -> torch.Tensor:
            holder["plan"] = planner(a, b, out)
            return out

        def timed(holder=holder) -> None:
            aa, bb = nxt()
            holder["plan"](aa, bb, scratch)

        sw.try_variant("gemm", shape, label, run, ref, timed, 1e-2, base)


HOST2_ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 1024, 128, True), (4, 32, 32, 2048, 128, True),
                     (4, 32, 32, 8192, 128, False), (4, 32, 32, 8192, 128, True), (4, 32, 8, 4096, 128, True),
                     (4, 32, 32, 4096, 64, True), (4, 32, 32, 16384, 128, False), (4, 32, 32, 16384, 128, True),
                     (4, 32, 8, 16384, 128, True)]
HOST2_SHORT = [(64, 128, 4, 3, False, None), (64, 64, 4, 4, False, None), (128, 64, 8, 3, False, None),
               (64, 128, 4, 2, False, None)]


def sweep_attention_host2(sw: Sweep) -> None:
    for b, h, h_kv, s, d, causal in HOST2_ATTN_SHAPES:
        shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"
        if sw.spent():
            sw.record("attention", shape, "skipped", None, None, "budget spent")
            continue
        variants: list[tuple[str, dict]] = [("host autotuned", {"persistent": False, "host_desc": True})]
        if d == 128:
            cfg = attn_mod.config(128, 64, 8, 2, False, 128)
            variants += [("persistent 128x64 w8 s2 r128", {"pinned": cfg, "persistent": True}),
                         ("one-tile device 128x64 w8 s2 r128", {"pinned": cfg, "persistent": False, "host_desc": False})]
        else:
            variants.append(("one-tile device autotuned", {"persistent": False, "host_desc": False}))
        if s <= 2048:
            for bm, bn, w, st, pipe, cap in HOST2_SHORT:
                variants.append((f"one-tile host {bm}x{bn} w{w} s{st}",
                                 {"pinned": attn_mod.config(bm, bn, w, st, pipe, cap), "persistent": False, "host_desc": True}))
        _attention_variants(sw, shape, b, h, h_kv, s, d, causal, variants)
        torch.cuda.empty_cache()


def _attention_variants(sw: Sweep, shape: str, b: int, h: int, h_kv: int, s: int, d: int, causal: bool,
                        variants: list[tuple[str, dict]]) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def make(b=b, h=h, h_kv=h_kv, s=s, d=d) -> tuple:
        return (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16),
                torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16),
                torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16))

    gqa = h != h_kv
    nxt = rotation(make, 2 * (2 * b * h * s * d + 2 * b * h_kv * s * d))
    q, k, v = make()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    def base_call(causal=causal) -> torch.Tensor:
        qq, kk, vv = nxt()
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal, enable_gqa=gqa)

    base = quick_bench(base_call)
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    sw.record("attention", shape, f"cuDNN ({flops / base / 1e9:.0f} TFLOP/s)", base, 0.0, "baseline", base)
    for label, kw in variants:

        def run(q=q, k=k, v=v, causal=causal, kw=kw) -> torch.Tensor:
            return attn_mod.attention(q, k, v, causal=causal, **kw)

        def timed(causal=causal, kw=kw) -> None:
            attn_mod.attention(*nxt(), causal=causal, **kw)

        sw.try_variant("attention", shape, label, run, ref, timed, 2e-2, base)


# Third call: more tiles for the non-causal rows (furthest from cuDNN) and the M = 128 GEMMs, all with
# host descriptors.
HOST3_GEMM = {(128, 4096, 4096): [("splitk_host", 2, 128, 64, 64, 4, 6, False), ("splitk_host", 2, 64, 64, 128, 4, 4, False),
                                  ("splitk_host", 2, 128, 64, 128, 8, 4, False), ("splitk_host", 2, 128, 64, 64, 4, 7, False),
                                  ("splitk_host", 2, 64, 128, 64, 4, 6, False)],
              (128, 4096, 14336): [("splitk_host", 2, 128, 64, 64, 4, 5, False), ("splitk_host", 2, 128, 64, 64, 4, 6, False),
                                   ("splitk_host", 4, 128, 64, 64, 4, 6, False), ("splitk_host", 2, 128, 64, 128, 4, 4, False)],
              (1024, 1024, 1024): [("tma_host", 1, 64, 128, 64, 4, 4, False), ("tma_host", 1, 64, 128, 128, 4, 3, False),
                                   ("tma_host", 1, 64, 128, 128, 4, 4, False)]}
HOST3_ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 2048, 128, False), (4, 32, 32, 4096, 128, False),
                     (4, 32, 32, 16384, 128, False)]
HOST3_ATTN = [(128, 64, 8, 2, False, 128), (64, 64, 4, 3, False, None), (128, 128, 8, 2, False, 128),
              (128, 128, 8, 3, False, None), (64, 64, 4, 2, False, None), (64, 32, 4, 3, False, None),
              (128, 128, 8, 2, False, None)]


def sweep_gemm_host3(sw: Sweep) -> None:
    for (m, n, k), entries in HOST3_GEMM.items():
        if sw.spent():
            sw.record("gemm", f"{m}x{n}x{k}", "skipped", None, None, "budget spent")
            continue
        variants: list[tuple[str, object]] = [("default", lambda a, b, o: gemm_mod.make_plan(a, b, o))]
        for e in entries:
            label = f"{e[0]}{e[1] if e[1] > 1 else ''} {e[2]}x{e[3]}x{e[4]} w{e[5]} s{e[6]}"
            variants.append((label, lambda a, b, o, e=e: gemm_mod.make_plan(a, b, o, choice=gemm_mod.pinned_config(e))))
        _gemm_plans(sw, m, n, k, variants)
        torch.cuda.empty_cache()


def sweep_attention_host3(sw: Sweep) -> None:
    for b, h, h_kv, s, d, causal in HOST3_ATTN_SHAPES:
        shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"
        if sw.spent():
            sw.record("attention", shape, "skipped", None, None, "budget spent")
            continue
        variants = [("host autotuned", {"persistent": False, "host_desc": True})]
        for bm, bn, w, st, pipe, cap in HOST3_ATTN:
            tag = f"{bm}x{bn} w{w} s{st}{f' r{cap}' if cap else ''}"
            variants.append((f"one-tile host {tag}",
                             {"pinned": attn_mod.config(bm, bn, w, st, pipe, cap), "persistent": False, "host_desc": True}))
        _attention_variants(sw, shape, b, h, h_kv, s, d, causal, variants)
        torch.cuda.empty_cache()


SWEEPS = {"gemm": sweep_gemm, "attention": sweep_attention, "moe": sweep_moe,
          "gemm_host": sweep_gemm_host, "attention_host": sweep_attention_host,
          "gemm_host2": sweep_gemm_host2, "attention_host2": sweep_attention_host2,
          "gemm_host3": sweep_gemm_host3, "attention_host3": sweep_attention_host3}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--family", default="gemm,attention,moe")
    ap.add_argument("--budget-s", type=float, default=100.0, help="seconds per family before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    warm = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + 2.0
    while time.time() < t_end:  # clocks up before timing
        torch.matmul(warm, warm)
        torch.cuda.synchronize()
    del warm
    sw = Sweep(args.out, args.budget_s)
    for fam in args.family.split(","):
        sw.family_start = time.time()
        SWEEPS[fam](sw)
    print(sw.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
