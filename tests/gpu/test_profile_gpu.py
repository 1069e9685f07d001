"""`argus profile` on a real GPU (scripts/gpu/profile_h200.sh runs this; never in CI).

Checks, on the JSON of one `argus profile --counters --do-bench-check` run of the GEMM and the
attention task: the reported median is within 5% of triton's do_bench in the same run, and our
percent of peak agrees with Nsight Compute's. Without ARGUS_PROFILE_H200_JSON it runs the profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results() -> list[dict]:
    path = os.environ.get("ARGUS_PROFILE_H200_JSON")
    if path:
        doc = json.loads(Path(path).read_text())
    else:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "argus.agent.profile.cli",
                "tests/profile/tasks/gemm.py::matmul_kernel",
                "tests/profile/tasks/attention.py::attn_fwd_kernel",
                "--counters",
                "--do-bench-check",
                "--json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
        )
        doc = json.loads(out.stdout)
    return doc if isinstance(doc, list) else [doc]


def test_both_kernels_profiled_on_gpu(results: list[dict]) -> None:
    assert {r["kernel"] for r in results} == {"matmul_kernel", "attn_fwd_kernel"}
    for r in results:
        assert r["backend"] == "nvidia" and r["peak"], r["device"]
        assert r["rel_error"] is not None and r["rel_error"] < 2e-2


def test_time_within_5_percent_of_do_bench(results: list[dict]) -> None:
    for r in results:
        assert r["do_bench_ms"], r["task"]
        assert abs(r["median_ms"] / r["do_bench_ms"] - 1) < 0.05, (
            r["task"],
            r["median_ms"],
            r["do_bench_ms"],
        )


def test_percent_of_peak_consistent_with_ncu(results: list[dict]) -> None:
    for r in results:
        c = r["counters"]
        assert c and not c.get("error"), c
        ours = r["roofline"]["pct_compute"]
        # 1. the same FLOPs over ncu's duration of its one profiled launch. ncu (like Proton) sees a
        #    short burst on a chip that has not reached its sustained, power-limited clock, so it is
        #    faster than the median we report (H200 run: GEMM 1.42 ms vs 1.64 ms, do_bench 1.65 ms;
        #    attention 2.43 vs 2.53): never slower than our median, and within 20% of it
        ncu_pct = c["compute_pct_of_table_peak"]
        assert ours * 0.97 <= ncu_pct <= ours * 1.20, (ours, ncu_pct)
        # 2. ncu's tensor-pipe activity is a % of the peak at the SM clock it measured; rescaled to
        #    the clock the datasheet figure assumes (peak / (SMs * 4096 dense bf16 FLOP per clock
        #    per Hopper SM)), it matches the FLOPs we counted over ncu's time within 15%
        sms = r["env"]["sm_count"]
        datasheet_clock = r["roofline"]["peak_tflops"] * 1e12 / (sms * 4096)
        pipe_pct = c["tensor_pct"] * c["sm_clock_hz"] / datasheet_clock
        assert abs(pipe_pct / ncu_pct - 1) < 0.15, (pipe_pct, ncu_pct)
        # 3. DRAM: ncu's measured bytes over its duration against our table's HBM peak agree with
        #    ncu's own dram__throughput % (the table and ncu use the same bandwidth ceiling)
        assert abs(c["dram_pct_of_table_peak"] / c["dram_pct"] - 1) < 0.15, c
