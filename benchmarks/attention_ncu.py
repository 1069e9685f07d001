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


def main() -> int:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ours = attn_mod.attention(q, k, v, pinned=attn_mod.regime_config(4096, 128, False, False), persistent=False,
                              host_desc=True)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    err = float((ours.float() - ref.float()).norm() / ref.float().norm())
    print(f"rel err ours vs cuDNN {err:.1e}")
    return 0 if err < 2e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
