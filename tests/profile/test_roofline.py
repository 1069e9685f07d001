"""Peak table look-ups, the roofline class and the one-line lens text."""

from __future__ import annotations

import pytest
from argus.agent.profile.peaks import PEAKS, find_peak, normalize_dtype, peak_by_name
from argus.agent.profile.result import ProfileResult
from argus.agent.profile.roofline import classify


@pytest.mark.parametrize(
    ("device", "name"),
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA B200", "B200"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Instinct MI325X", "MI325X"),
        ("gfx942", "MI300X"),
    ],
)
def test_find_peak(device: str, name: str) -> None:
    assert find_peak(device).name == name


def test_unknown_parts_get_no_peak() -> None:
    assert find_peak("NVIDIA H100 PCIe") is None
    assert find_peak("NVIDIA A100-SXM4-80GB") is None
    assert find_peak("CPU (Triton interpreter)") is None


def test_table_has_dense_bf16_fp16_fp8_and_hbm() -> None:
    assert {p.name for p in PEAKS} >= {"H100 SXM", "H200", "B200", "MI300X", "MI325X"}
    for p in PEAKS:
        assert {"bf16", "fp16", "fp8"} <= set(p.tflops) and p.hbm_tbs > 0 and p.source
        assert p.tflops["fp8"] == pytest.approx(2 * p.tflops["bf16"], rel=0.01)
    assert normalize_dtype("torch.bfloat16") == "bf16" and peak_by_name("mi300x").name == "MI300X"


def test_compute_bound_gemm_on_h200() -> None:
    f = 2 * 8192**3
    r = classify(1.586e-3, f, 2 * 3 * 8192**2, find_peak("NVIDIA H200"), "bfloat16")
    assert r.bound == "compute-bound"
    assert r.tflops == pytest.approx(693, rel=0.01)
    assert r.pct_of_roof == pytest.approx(70, abs=1)
    assert r.ridge == pytest.approx(989.4 / 4.8, rel=1e-6)


def test_memory_and_latency_bound() -> None:
    h200 = find_peak("NVIDIA H200")
    n = 1 << 28
    assert classify(n * 12 / 4.0e12, n, n * 12, h200, "fp32").bound == "memory-bound"
    assert classify(0.1, n, n * 12, h200, "fp32").bound == "latency-bound"  # 0.7 % of bandwidth
    copy = classify(1e-3, None, 4.0e9, h200, "bf16")  # no FLOPs: the bandwidth roof alone
    assert copy.bound == "memory-bound" and copy.pct_of_roof == pytest.approx(83.3, abs=0.1)
    assert classify(1e-3, 1e9, 1e6, None, "bf16").bound == "unknown"


def _result(**kw) -> ProfileResult:
    h200 = find_peak("NVIDIA H200")
    base = dict(
        task="gemm.py::matmul_kernel",
        kernel="matmul_kernel",
        target="local",
        device="NVIDIA H200",
        backend="nvidia",
        sizes={"M": 8192},
        dtype="bfloat16",
        median_ms=0.81,
        timing={},
        flops=0.81e-3 * 693e12,
        bytes=1e8,
        flops_source="task formula",
        bytes_source="task formula",
        roofline=classify(0.81e-3, 0.81e-3 * 693e12, 1e8, h200, "bf16"),
        peak="H200",
    )
    base.update(kw)
    return ProfileResult(**base)


def test_lens_text_and_json_round_trip() -> None:
    r = _result()
    assert r.lens_text() == "0.810 ms, 693 TFLOP/s, 70% of H200 peak, compute-bound"
    again = ProfileResult.from_json(r.to_json())
    assert again.lens_text() == r.lens_text() and again.roofline == r.roofline
    cpu = _result(backend="cpu", device="CPU (Triton interpreter)", peak=None, median_ms=3.07)
    assert cpu.lens_text() == "3.07 ms, CPU interpreter, no peaks"
