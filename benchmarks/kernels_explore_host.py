"""The host-built-descriptor sweeps of benchmarks/kernels_explore.py (three device calls, 2026-12-01).

    python benchmarks/kernels_explore.py --out DIR --family gemm_host,attention_host   (and _host2, _host3)

Each family times the same kernels and configs with descriptors built on the device and on the host,
and the launcher's own choice, on the benchmark shapes; kernels_explore.Sweep checks every variant's
output before timing it. Outputs: benchmarks/results/kernels-explore-h200-host{,2,3}.txt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
import triton
from argus.knowledge.kernels import attention as attn_mod
from argus.knowledge.kernels import gemm as gemm_mod

from benchmarks.kernels import gemm_sweep_inputs, quick_bench, rotation, sweep_gemm_plan

if TYPE_CHECKING:
    from benchmarks.kernels_explore import Sweep


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
    gemm = gemm_sweep_inputs(sw, m, n, k)
    for label, entry in _gemm_host_entries(m, n, k):
        sweep_gemm_plan(sw, gemm, label, None if entry is None else gemm_mod.pinned_config(entry))


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
    shape, nxt, a, b, ref, base = gemm_sweep_inputs(sw, m, n, k)
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


def sweep_pinned_gemms(sw: Sweep, table: dict, label: Callable[[tuple], str]) -> None:
    """Each GEMM shape of `table` with the launcher's default plan against its pinned configs
    (entries as gemm.TUNED holds them; `label` names one in the report)."""
    for (m, n, k), entries in table.items():
        if sw.spent():
            sw.record("gemm", f"{m}x{n}x{k}", "skipped", None, None, "budget spent")
            continue
        variants: list[tuple[str, object]] = [("default", lambda a, b, o: gemm_mod.make_plan(a, b, o))]
        for e in entries:
            variants.append((label(e), lambda a, b, o, e=e: gemm_mod.make_plan(a, b, o, choice=gemm_mod.pinned_config(e))))
        _gemm_plans(sw, m, n, k, variants)
        torch.cuda.empty_cache()


def sweep_pinned_attention(sw: Sweep, shapes: list[tuple], first: tuple[str, dict],
                           configs: Callable[[int, bool, int], list[tuple]]) -> None:
    """Each attention shape (B, H, H_KV, S, D, causal) with `first` against one-tile host-descriptor
    launches of the configs `configs(D, causal, S)` gives, as (BLOCK_M, BLOCK_N, num_warps,
    num_stages, PIPE_QK, MAXNREG)."""
    for b, h, h_kv, s, d, causal in shapes:
        shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"
        if sw.spent():
            sw.record("attention", shape, "skipped", None, None, "budget spent")
            continue
        variants: list[tuple[str, dict]] = [first]
        for bm, bn, w, st, pipe, cap in configs(d, causal, s):
            tag = f"{bm}x{bn} w{w} s{st}{' pipe_qk' if pipe else ''}{f' r{cap}' if cap else ''}"
            variants.append((f"one-tile host {tag}", {"pinned": attn_mod.config(bm, bn, w, st, pipe, cap),
                                                      "persistent": False, "host_desc": True}))
        _attention_variants(sw, shape, b, h, h_kv, s, d, causal, variants)
        torch.cuda.empty_cache()


def split_label(e: tuple) -> str:
    """A pinned GEMM config's name: path, split when above 1, tile, warps, stages."""
    return f"{e[0]}{e[1] if e[1] > 1 else ''} {e[2]}x{e[3]}x{e[4]} w{e[5]} s{e[6]}"


def sweep_gemm_host3(sw: Sweep) -> None:
    sweep_pinned_gemms(sw, HOST3_GEMM, split_label)


def sweep_attention_host3(sw: Sweep) -> None:
    sweep_pinned_attention(sw, HOST3_ATTN_SHAPES, ("host autotuned", {"persistent": False, "host_desc": True}),
                           lambda d, causal, s: HOST3_ATTN)


HOST_SWEEPS = {"gemm_host": sweep_gemm_host, "attention_host": sweep_attention_host,
               "gemm_host2": sweep_gemm_host2, "attention_host2": sweep_attention_host2,
               "gemm_host3": sweep_gemm_host3, "attention_host3": sweep_attention_host3}
