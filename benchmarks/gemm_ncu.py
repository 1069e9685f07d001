"""One launch each of our GEMM and cuBLAS on the skinny shapes still below 1.0, for Nsight Compute.

    ncu --clock-control none --profile-from-start off -k regex:"gemm|xmma|cutlass|sm90" \
        --section SpeedOfLight --section LaunchStats --section Occupancy python3 benchmarks/gemm_ncu.py

Shapes 128x4096x4096, 128x14336x4096 and 16x14336x4096 (M x N x K, bf16): each side runs three times
first (our launcher builds its plan, cuBLAS picks its kernel), then once inside the profiler range, so
ncu sees exactly the launches the benchmark times: grid, tile (cuBLAS's kernel name carries it), DRAM
throughput and duration side by side. scripts/gpu/kernels_h200.sh runs it after the benchmark.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

SHAPES = [(128, 4096, 4096), (128, 14336, 4096), (16, 14336, 4096)]


def main() -> int:
    worst = 0.0
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k)
        for _ in range(3):
            ours, ref = gemm_mod.matmul(a, b), torch.matmul(a, b)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        ours = gemm_mod.matmul(a, b)
        ref = torch.matmul(a, b)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
        err = float((ours.float() - ref.float()).norm() / ref.float().norm())
        worst = max(worst, err)
        print(f"{m}x{n}x{k}: ours {gemm_mod.TUNED.get((m, n, k), 'autotuned')}, rel err vs cuBLAS {err:.1e}")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
