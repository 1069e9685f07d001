"""NVIDIA-side parsers on real output captured on the H200 (fixtures/README.md)."""

from __future__ import annotations

import json
import statistics

import pytest
from argus.agent.profile import ncu
from argus.agent.profile.api import summarize_counters
from argus.agent.profile.peaks import find_peak
from argus.agent.profile.proton import parse_hatchet, summarize_times
from argus.agent.profile.worker_schema import CounterCapture

from tests.profile.conftest import FIXTURES


def _ncu(kernel: str) -> str:
    return (FIXTURES / f"ncu_h200_{kernel}.csv").read_text()


def test_ncu_csv_skips_prof_lines_and_reads_thousands_and_na() -> None:
    text = _ncu("matmul_kernel")
    assert text.startswith("==WARNING==")  # ncu's notes come before the CSV
    [k] = ncu.parse_ncu_csv(text)
    assert k.name == "matmul_kernel" and k.block == "(256, 1, 1)" and k.grid == "(2048, 1, 1)"
    assert k.get("launch__grid_size") == 2048  # "2,048"
    assert k.get("dram__bytes_read.sum") > 1e9  # "1,493,177,600"-style
    assert 1e-3 < k.get("gpu__time_duration.sum") < 2e-3  # "ns" scaled to seconds
    assert k.units["gpu__time_duration.sum"] == "ns"
    assert k.get("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active") is None  # n/a
    assert 1e9 < k.get("sm__cycles_elapsed.avg.per_second") < 2.1e9


def test_ncu_summary_and_percent_of_table_peak() -> None:
    s = ncu.summarize(ncu.parse_ncu_csv(_ncu("matmul_kernel")), "matmul_kernel")
    assert s.kernels == 1 and s.tensor_pct > 90 and s.sm_pct > 90
    assert s.dram_tbs == pytest.approx(s.dram_bytes / s.duration_s / 1e12)
    out = summarize_counters(
        CounterCapture(tool="ncu", stdout=_ncu("attn_fwd_kernel")),
        "attn_fwd_kernel",
        find_peak("NVIDIA H200"),
    )
    # ncu's DRAM % of its own peak equals its measured bytes over our table's 4.8 TB/s
    assert out["dram_pct_of_table_peak"] == pytest.approx(out["dram_pct"], rel=0.05)


def test_ncu_garbage_and_errors() -> None:
    assert ncu.parse_ncu_csv("==ERROR== Failed to find metric foo\n") == []
    assert ncu.number("1,234.5") == 1234.5 and ncu.number("n/a") is None and ncu.number("") is None
    assert summarize_counters(CounterCapture(tool="ncu", error="ncu not found"), "k", None) == {
        "tool": "ncu",
        "error": "ncu not found",
    }


def test_proton_hatchet() -> None:
    for kernel in ("matmul_kernel", "attn_fwd_kernel"):
        parsed = parse_hatchet(json.loads((FIXTURES / f"proton_h200_{kernel}.hatchet").read_text()))
        assert list(parsed) == [kernel]
        assert parsed[kernel]["count"] == 10
        # Proton's per-launch time agrees with ncu's duration of the same kernel within 10%
        ncu_s = ncu.summarize(ncu.parse_ncu_csv(_ncu(kernel)), kernel).duration_s
        assert parsed[kernel]["avg_ns"] * 1e-9 == pytest.approx(ncu_s, rel=0.10)


def test_do_bench_times() -> None:
    times = json.loads((FIXTURES / "do_bench_h200_matmul_kernel.json").read_text())
    s = summarize_times(times)
    assert s["median_ms"] == statistics.median(times) and s["min_ms"] <= s["p10_ms"] <= s["median_ms"]
    assert 1.0 < s["median_ms"] < 3.0 and s["n"] == len(times)
