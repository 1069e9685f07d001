"""Datasheet peaks for the roofline.

Why our own table: the profilers' built-in peaks differ between tools and versions (ncu derives its
percentages from the clocks it sees; rocprof-compute's peaks use the maximum engine clock from
rocminfo), so two tools disagree on the same kernel. One table, with a cited source per entry,
keeps "% of peak" comparable across NVIDIA and AMD runs. Figures are *dense* (no 2:4 sparsity):
vendors print the sparse figure first, and dense is half of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Peak:
    """One accelerator's ceilings: matrix TFLOP/s per dtype and HBM bandwidth in TB/s."""

    name: str
    vendor: str  # "nvidia" or "amd"
    tflops: dict[str, float]  # dtype -> dense TFLOP/s (tensor / matrix cores; fp32 = vector units)
    hbm_tbs: float
    source: str
    aliases: tuple[str, ...] = field(default=())

    def flops_per_s(self, dtype: str) -> float | None:
        """Peak FLOP/s for `dtype`, or None when the table has no figure for it."""
        value = self.tflops.get(normalize_dtype(dtype))
        return None if value is None else value * 1e12

    @property
    def bytes_per_s(self) -> float:
        return self.hbm_tbs * 1e12


# fmt: off
PEAKS: tuple[Peak, ...] = (
    # NVIDIA H100 SXM5 80 GB. Source: NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100/):
    # FP16/BF16 1,979 TFLOPS and FP8 3,958 TFLOPS "with sparsity" (dense = half), TF32 989 (sparse),
    # FP32 67 TFLOPS, GPU memory bandwidth 3.35 TB/s.
    Peak("H100 SXM", "nvidia",
         {"bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9},
         3.35, "NVIDIA H100 datasheet (SXM5), dense = sparse / 2",
         aliases=("h100 80gb hbm3", "h100 sxm", "h100")),
    # NVIDIA H200 SXM 141 GB. Source: NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200/):
    # same Hopper compute as H100 SXM (BF16 1,979 / FP8 3,958 TFLOPS sparse), HBM3e 4.8 TB/s.
    Peak("H200", "nvidia",
         {"bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9},
         4.8, "NVIDIA H200 datasheet (SXM), dense = sparse / 2",
         aliases=("h200",)),
    # NVIDIA B200 (HGX B200, per GPU). Source: NVIDIA HGX B200 / DGX B200 datasheet: 8 GPUs give FP16/BF16
    # 36 PFLOPS and FP8 72 PFLOPS with sparsity -> per GPU dense 2.25 / 4.5 PFLOPS; TF32 18 PF sparse
    # (1.125 dense per GPU); FP32 600 TF for 8 (75 per GPU); HBM3e 8 TB/s per GPU.
    Peak("B200", "nvidia",
         {"bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0, "tf32": 1125.0, "fp32": 75.0},
         8.0, "NVIDIA HGX/DGX B200 datasheet, per GPU, dense = sparse / 2",
         aliases=("b200",)),
    # AMD Instinct MI300X OAM. Source: AMD Instinct MI300X data sheet and CDNA 3 white paper:
    # peak dense FP16/BF16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS, TF32 653.7, FP32 vector 163.4,
    # HBM3 5.3 TB/s, 304 CUs.
    Peak("MI300X", "amd",
         {"bf16": 1307.4, "fp16": 1307.4, "fp8": 2614.9, "tf32": 653.7, "fp32": 163.4},
         5.3, "AMD Instinct MI300X data sheet (dense)",
         aliases=("mi300x", "gfx942")),
    # AMD Instinct MI325X OAM. Source: AMD Instinct MI325X data sheet: same CDNA 3 compute as MI300X
    # (FP16/BF16 1,307.4, FP8 2,614.9 TFLOPS dense), 256 GB HBM3E at 6.0 TB/s.
    Peak("MI325X", "amd",
         {"bf16": 1307.4, "fp16": 1307.4, "fp8": 2614.9, "tf32": 653.7, "fp32": 163.4},
         6.0, "AMD Instinct MI325X data sheet (dense)",
         aliases=("mi325x",)),
)
# fmt: on

_DTYPE_ALIASES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "float8_e4m3fnuz": "fp8",
    "float8_e5m2fnuz": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
}


def normalize_dtype(dtype: str) -> str:
    """Map torch-style names ("bfloat16", "torch.float16") onto the table's columns ("bf16")."""
    d = dtype.lower().removeprefix("torch.")
    return _DTYPE_ALIASES.get(d, d)


def find_peak(device_name: str) -> Peak | None:
    """Match a device name as torch reports it ("NVIDIA H200", "AMD Instinct MI300X") to the table.

    The longest matching alias wins, so "H100" never shadows a more specific entry. Unknown parts
    (an H100 PCIe, an A100) return None rather than a wrong neighbour's numbers.
    """
    low = device_name.lower()
    if "pcie" in low or "nvl" in low:
        return None
    best: tuple[int, Peak] | None = None
    for peak in PEAKS:
        for alias in peak.aliases:
            if re.search(rf"(^|[^a-z0-9]){re.escape(alias)}([^a-z0-9]|$)", low) and (
                best is None or len(alias) > best[0]
            ):
                best = (len(alias), peak)
    return None if best is None else best[1]


def peak_by_name(name: str) -> Peak | None:
    """Look a table entry up by its own name or an alias (for `--peak H200`)."""
    low = name.lower()
    for peak in PEAKS:
        if low == peak.name.lower() or low in peak.aliases:
            return peak
    return None
