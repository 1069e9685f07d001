"""Hardware counters for the profiling worker: ncu (NVIDIA) and rocprofv3 / rocprof-compute (AMD).

Each profiler runs worker.py again in counters-child mode (a warm-up, then one profiled range)
and its raw output goes back unparsed in a `CounterCapture`; Argus parses it (ncu.py, rocprof.py).
Staged next to worker.py and, like it, standard library only.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile

try:  # staged next to worker.py (targets.py)
    import worker_schema as schema
except ImportError:  # imported from its package rather than run as the staged script
    from argus.agent.profile import worker_schema as schema

#: The script the profilers start: the worker, in counters-child mode.
WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")

NCU_METRICS = [
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",  # Hopper wgmma
    "sm__cycles_elapsed.avg.per_second",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
]
#: Retried with this smaller set when ncu rejects a metric name the GPU does not have.
NCU_CORE_METRICS = NCU_METRICS[:6]


def find_tool(name: str, extra: list[str]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for path in extra:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def run_ncu(req_path: str, timeout: float) -> schema.CounterCapture:
    ncu = find_tool(
        "ncu", ["/usr/local/cuda/bin/ncu", *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))]
    )
    if ncu is None:
        return schema.CounterCapture(
            tool="ncu", error="ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin"
        )
    child = [sys.executable, WORKER_SCRIPT, req_path, "counters-child"]
    result: dict = {"tool": "ncu", "path": ncu}
    metrics = list(NCU_METRICS)
    for _ in range(4):  # a metric this GPU lacks fails the whole run: drop the ones ncu names, retry
        cmd = [
            ncu,
            "--clock-control",
            "none",
            "--csv",
            "--print-units",
            "base",
            "--profile-from-start",
            "off",
            "--launch-count",
            "50",
            "--metrics",
            ",".join(metrics),
            *child,
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return schema.CounterCapture(**result, error=f"ncu did not finish in {timeout:.0f} s")
        result.update(
            command=cmd[: -len(child)],
            rc=proc.returncode,
            stdout=proc.stdout[-4_000_000:],
            stderr=proc.stderr[-4000:],
        )
        if proc.returncode == 0 and '"ID"' in proc.stdout:
            return schema.CounterCapture(**result)
        text = proc.stdout + proc.stderr
        bad = [m for m in metrics if m in text and m not in NCU_CORE_METRICS]
        if not bad and "metric" not in text.lower():
            break
        metrics = [m for m in metrics if m not in bad] if bad else list(NCU_CORE_METRICS)
        result.setdefault("dropped_metrics", []).extend(bad)
    error = f"ncu failed (exit {result.get('rc')}): " + _tail(
        result.get("stdout", "") + result.get("stderr", "")
    )
    return schema.CounterCapture(**result, error=error)


def run_rocprof(req_path: str, timeout: float) -> schema.CounterCapture:
    rocprof = find_tool("rocprofv3", ["/opt/rocm/bin/rocprofv3"])
    if rocprof is None:
        return schema.CounterCapture(
            tool="rocprofv3", error="rocprofv3 not found on PATH or in /opt/rocm/bin"
        )
    out_dir = tempfile.mkdtemp(prefix="argus-rocprof-")
    child = [sys.executable, WORKER_SCRIPT, req_path, "counters-child"]
    cmd = [
        rocprof,
        "--kernel-trace",
        "--stats",
        "--output-format",
        "csv",
        "-d",
        out_dir,
        "-o",
        "argus",
        "--",
        *child,
    ]
    result: dict = {"tool": "rocprofv3", "command": cmd[: -len(child)]}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return schema.CounterCapture(**result, error=f"rocprofv3 did not finish in {timeout:.0f} s")
    result.update(rc=proc.returncode, stderr=proc.stderr[-4000:])
    for root, _, files in os.walk(out_dir):
        for f in files:
            if f.endswith(("kernel_trace.csv", "kernel_stats.csv")):
                with open(os.path.join(root, f)) as fh:
                    key = "kernel_trace" if f.endswith("kernel_trace.csv") else "kernel_stats"
                    result[key] = fh.read()[-4_000_000:]
    shutil.rmtree(out_dir, ignore_errors=True)
    if "kernel_trace" not in result:
        error = f"rocprofv3 wrote no kernel trace (exit {proc.returncode}): {_tail(proc.stderr)}"
        return schema.CounterCapture(**result, error=error)
    compute = find_tool("rocprof-compute", ["/opt/rocm/bin/rocprof-compute"])
    if compute:  # System Speed-of-Light (block 2): the parser reads its table
        work = tempfile.mkdtemp(prefix="argus-rocprof-compute-")
        try:
            subprocess.run(
                [compute, "profile", "-n", "argus", "-p", work, "-b", "2", "--", *child],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            proc = subprocess.run(
                [compute, "analyze", "-p", _workload_dir(work), "-b", "2"],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            result["compute_analyze"] = proc.stdout[-1_000_000:]
        except subprocess.TimeoutExpired:
            result["compute_error"] = f"rocprof-compute did not finish in {timeout:.0f} s"
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return schema.CounterCapture(**result)


def _workload_dir(work: str) -> str:
    for root, _, files in os.walk(work):
        if "pmc_perf.csv" in files:
            return root
    return work


def _tail(text: str, n: int = 600) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-6:])[-n:]
