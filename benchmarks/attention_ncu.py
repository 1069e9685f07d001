"""One launch each of our attention and cuDNN's SDPA, for Nsight Compute to profile side by side.

    ncu --clock-control none -k regex:"attention_|sdpa|fprop|fmha|flash" -c 2 python3 benchmarks/attention_ncu.py

Shape B4 H32 S4096 D128, not causal, bf16; our kernel runs with the tile the launcher takes there
(attention.regime_config: one tile per program, host-built descriptors; since session 7 128x64 over one
warpgroup, two stages, no register cap) pinned, so that no autotuning launches are profiled.
scripts/gpu/kernels_h200.sh runs it after the benchmark, for the table's "why".
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402


def one_shape(b: int, h: int, h_kv: int, s: int, d: int, causal: bool) -> float:
    """Our launch (the launcher's tile, pinned when it has one) and cuDNN's, once each; the rel err."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    pinned = attn_mod.regime_config(s, d, causal, h != h_kv)
    if pinned is None:  # an autotuned row: tune outside the profiled launch, then pin the pick
        attn_mod.attention(q, k, v, causal=causal)
        pinned = attn_mod.attention_fwd_host_kernel.best_config
    ours = attn_mod.attention(q, k, v, causal=causal, pinned=pinned, persistent=False, host_desc=True)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=h != h_kv)
    torch.cuda.synchronize()
    err = float((ours.float() - ref.float()).norm() / ref.float().norm())
    print(f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}: {pinned}, rel err ours vs cuDNN {err:.1e}")
    return err


def main(argv: list[str] | None = None) -> int:
    """Default: B4 H32 S4096 D128 not causal. Arguments B,H,H_KV,S,D,causal (causal 0/1) name other
    shapes, profiled in that order (ncu -c 2 per shape; an autotuned row adds its tuning launches, so
    pass autotuned rows with -k filters or a larger -c)."""
    args = sys.argv[1:] if argv is None else argv
    shapes = [tuple(int(x) for x in a.split(",")) for a in args] or [(4, 32, 32, 4096, 128, 0)]
    worst = max(one_shape(b, h, hk, s, d, bool(c)) for b, h, hk, s, d, c in shapes)
    return 0 if worst < 2e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
