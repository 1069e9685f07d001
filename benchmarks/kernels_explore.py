"""One timed sweep over the reference kernels' variants on the benchmark's weak shapes (one device call).

    python benchmarks/kernels_explore.py --out DIR [--family gemm,attention,moe] [--budget-s 100]

Per shape it times the library baseline and every variant (path, split, config) the way
benchmarks/kernels.py times a row (fresh random inputs rotated past the L2, medians of do_bench), after
checking each variant's output against the baseline's; a variant that fails to compile or is wrong is
listed with the reason and never ranked. Prints one line per variant and, per shape, the fastest
correct variant; writes everything to DIR/explore.json. The winners are what the kernels pin (gemm.TUNED,
attention.ATTN_CONFIGS, moe.GATE_UP_CONFIGS / DOWN_CONFIGS); benchmarks/kernels.py then measures them.
The host-descriptor families (gemm_host, attention_host and their _host2 / _host3 follow-ups) live in
benchmarks/kernels_explore_host.py, the fourth sweep's (gemm_pins, attention_pins) in kernels_explore_pins.py.
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

from benchmarks.kernels import (  # noqa: E402
    L2_BYTES,
    gemm_sweep_inputs,
    quick_bench,
    rel_err,
    rotation,
    sweep_gemm_plan,
    torch_moe,
)
from benchmarks.kernels_explore_host import HOST_SWEEPS  # noqa: E402
from benchmarks.kernels_explore_pins import PINS_SWEEPS  # noqa: E402
from benchmarks.kernels_timing import clocks_up  # noqa: E402


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
    gemm = gemm_sweep_inputs(sw, m, n, k)
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
        sweep_gemm_plan(sw, gemm, label, gemm_mod.pinned_config(entry))


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


SWEEPS = {"gemm": sweep_gemm, "attention": sweep_attention, "moe": sweep_moe, **HOST_SWEEPS, **PINS_SWEEPS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--family", default="gemm,attention,moe")
    ap.add_argument("--budget-s", type=float, default=100.0, help="seconds per family before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    clocks_up()
    sw = Sweep(args.out, args.budget_s)
    for fam in args.family.split(","):
        sw.family_start = time.time()
        SWEEPS[fam](sw)
    print(sw.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
