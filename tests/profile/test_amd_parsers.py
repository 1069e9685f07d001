"""rocprofv3 and rocprof-compute parsers, on fixtures in the formats AMD documents (fixtures/README.md)."""

from __future__ import annotations

import pytest
from argus.agent.profile import rocprof
from argus.agent.profile.api import summarize_counters
from argus.agent.profile.peaks import find_peak
from argus.agent.profile.worker_schema import CounterCapture

from tests.profile.conftest import FIXTURES


def test_kernel_trace_programs_are_grid_over_workgroup() -> None:
    dispatches = rocprof.parse_kernel_trace((FIXTURES / "rocprofv3_kernel_trace.csv").read_text())
    assert len(dispatches) == 9
    mm = dispatches[1]
    assert mm.name == "matmul_kernel" and mm.grid == (262144, 1, 1) and mm.workgroup == (256, 1, 1)
    assert mm.programs == 1024  # Grid_Size counts work-items: 262144 / 256
    assert mm.duration_ns == 1_240_000 and mm.vgpr == 128 and mm.lds_bytes == 65536


def test_trace_summary_skips_warmup_and_other_kernels() -> None:
    dispatches = rocprof.parse_kernel_trace((FIXTURES / "rocprofv3_kernel_trace.csv").read_text())
    s = rocprof.summarize_trace(dispatches, "matmul_kernel", skip=3)
    assert s["dispatches"] == 5 and s["programs"] == 1024
    assert s["median_ns"] == 1_210_000


def test_kernel_stats() -> None:
    stats = rocprof.parse_kernel_stats((FIXTURES / "rocprofv3_kernel_stats.csv").read_text())
    assert [s.name for s in stats] == ["matmul_kernel", "__amd_rocclr_fillBufferAligned"]
    assert stats[0].calls == 8 and stats[0].average_ns == 1_225_000.0 and stats[0].percentage == 99.96


def test_compute_analyze_speed_of_light() -> None:
    tables = rocprof.parse_compute_analyze((FIXTURES / "rocprof_compute_analyze.txt").read_text())
    sol = tables["2.1 Speed-of-Light"]
    mfma = rocprof.sol_metric(sol, "MFMA FLOPs (BF16)")
    assert mfma == {"value": 897612.8, "peak": 1307443.2, "pct": 68.65, "unit": "Gflop"}
    assert rocprof.sol_metric(sol, "L2-Fabric Read Latency")["pct"] is None  # blank cell
    assert "LDS Bank Conflicts/Access (wrapped name)" in sol  # a wrapped cell is joined
    assert tables["0.1 Top Kernels"]["matmul_kernel"]["Count"] == "8.00"


def test_newer_column_names_read_alike() -> None:
    row = {"Metric": "VALU FLOPs", "Value": "10.0", "Unit": "Gflop", "Peak": "100", "PoP": "10.0"}
    assert rocprof.sol_metric({"VALU FLOPs": row}, "VALU FLOPs")["pct"] == 10.0


def test_counter_summary_for_amd() -> None:
    raw = CounterCapture(
        tool="rocprofv3",
        kernel_trace=(FIXTURES / "rocprofv3_kernel_trace.csv").read_text(),
        compute_analyze=(FIXTURES / "rocprof_compute_analyze.txt").read_text(),
    )
    s = summarize_counters(raw, "matmul_kernel", find_peak("AMD Instinct MI300X"))
    assert s["programs"] == 1024 and s["median_ns"] == pytest.approx(1_210_000)
    assert s["speed_of_light"]["MFMA Util"]["value"] == 71.22
    missing = CounterCapture(tool="rocprofv3", error="rocprofv3 not found")
    assert summarize_counters(missing, "k", None)["error"] == "rocprofv3 not found"
