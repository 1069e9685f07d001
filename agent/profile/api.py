"""The one entry point for profiling: the CLI, the language server and the agent all call `profile`.

    result = profile("kernels/mm.py::matmul_kernel", target="ssh://gpu-host",
                     progress=lambda phase, done, total: ..., cancel=threading.Event())
    result.lens_text()   # "0.81 ms, 693 TFLOP/s, 70% of H200 peak, compute-bound"
    result.to_json()

It runs the user's code only in a subprocess (worker.py), and only because someone asked.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from argus.agent.profile import ncu, proton, rocprof
from argus.agent.profile.peaks import Peak, find_peak, peak_by_name
from argus.agent.profile.result import ProfileResult
from argus.agent.profile.roofline import classify
from argus.agent.profile.runner import ProfileError, ProgressFn, WorkerRun
from argus.agent.profile.targets import parse_target, run_local, run_ssh
from argus.agent.profile.worker_schema import CounterCapture, SchemaError, WorkerRequest
from argus.agent.task import Task, TaskError, load_task

__all__ = ["profile", "ProfileError", "ProfileCancelled", "ProfileResult"]


class ProfileCancelled(ProfileError):
    """The caller set the cancel event; the worker (local or remote) was killed."""


def profile(
    task: Task | str,
    target: str = "local",
    backend: str = "auto",
    *,
    shape: str | Sequence[str] | None = None,
    counters: bool = False,
    timeout: float = 600.0,
    python: str | None = None,
    dtype: str | None = None,
    peak: str | None = None,
    do_bench_check: bool = False,
    proton_trace: bool = False,
    timing: dict | None = None,
    ssh_config: str | None = None,
    ssh_identity: str | None = None,
    ssh_options: Sequence[str] = (),
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> ProfileResult:
    """Profile `task` ("FILE::KERNEL" or a Task) on `target` ("local" or "ssh://[user@]host[:port]").

    backend: "auto" (whatever GPU the target has, else the Triton interpreter on its CPU),
    "nvidia", "amd" (fail when that GPU is absent) or "cpu" (force the interpreter).
    counters: also run ncu (NVIDIA) or rocprofv3 + rocprof-compute (AMD) on the target.
    timing: fields of worker_schema.Timing (warmup_ms, rep_ms, min_reps, max_reps, flush_mb, cpu_reps).
    Raises ProfileError (TaskError for a bad task, ProfileCancelled on cancel) with a message
    meant for the user.
    """
    if backend not in ("auto", "nvidia", "amd", "cpu"):
        raise ProfileError(f"unknown backend {backend!r}: use auto, nvidia, amd or cpu")
    if isinstance(task, str):
        task = load_task(task)
    shape_arg = list(shape) if isinstance(shape, list | tuple) else shape
    options = {
        "backend": backend,
        "counters": "auto" if counters else "none",
        "do_bench_check": do_bench_check,
        "proton": proton_trace,
        "timing": timing or {},
        "counter_timeout": max(30.0, timeout * 0.6),
    }
    try:
        request = WorkerRequest.from_dict({**task.request(shape_arg), **options}, "request")
    except SchemaError as exc:
        raise ProfileError(f"{task.name}: {exc}") from None
    ssh = parse_target(target, config=ssh_config, identity=ssh_identity, options=tuple(ssh_options))
    python = python or task.python
    if ssh is None:
        run = run_local(request, task.path, python=python, timeout=timeout, progress=progress, cancel=cancel)
    else:
        run = run_ssh(
            ssh, request, task.path, python=python, timeout=timeout, progress=progress, cancel=cancel
        )
    return build_result(task, request, run, str(ssh or "local"), dtype=dtype, peak_name=peak, timeout=timeout)


def build_result(
    task: Task,
    request: WorkerRequest,
    run: WorkerRun,
    target: str,
    *,
    dtype: str | None = None,
    peak_name: str | None = None,
    timeout: float = 0.0,
) -> ProfileResult:
    """Turn the worker's result event into a ProfileResult: peaks, roofline, parsed counters."""
    if run.cancelled:
        raise ProfileCancelled(f"{task.name}: cancelled; the worker on {target} was stopped")
    if run.timed_out:
        raise ProfileError(
            f"{task.name}: timed out after {timeout:.0f} s on {target}; "
            "the worker and its child processes were killed"
        )
    if run.error:
        detail = f"\n{run.traceback}" if run.traceback else ""
        raise ProfileError(f"{task.name} on {target}: {run.error}{detail}")
    if run.result is None:
        tail = (run.stderr_tail or run.output_tail).strip().splitlines()[-8:]
        raise ProfileError(
            f"{task.name} on {target}: the worker exited ({run.returncode}) without a result:\n"
            + "\n".join(tail)
        )
    res = run.result
    if raw_dir := os.environ.get("ARGUS_PROFILE_KEEP_RAW"):  # the H200 script keeps raw tool output
        Path(raw_dir).mkdir(parents=True, exist_ok=True)
        (Path(raw_dir) / f"{task.kernel}.raw.json").write_text(json.dumps(res.to_dict()))
    env = res.env
    notes: list[str] = list(res.warnings)
    pk: Peak | None = None
    if env.backend == "cpu":
        notes.append(
            "no GPU on the target: ran under the Triton interpreter; the time is CPU time and no peaks apply"
        )
    else:
        pk = peak_by_name(peak_name) if peak_name else find_peak(env.name)
        if pk is None:
            notes.append(f"no peak table entry for {env.name!r}: rates shown without % of peak")
    the_dtype = dtype or res.dtype or "bf16"
    roof = classify(res.median_ms * 1e-3, res.flops, res.bytes, pk, the_dtype)
    result = ProfileResult(
        task=task.name,
        kernel=task.kernel,
        target=target,
        device=env.name,
        backend=env.backend,
        sizes=dict(request.sizes),
        dtype=the_dtype,
        median_ms=float(res.median_ms),
        timing=proton.summarize_times(res.times_ms),
        flops=res.flops,
        bytes=res.bytes,
        flops_source=res.flops_source,
        bytes_source=res.bytes_source,
        roofline=roof,
        peak=pk.name if pk else None,
        rel_error=res.rel_error,
        env=env.to_dict(),
        notes=notes,
    )
    if res.do_bench is not None:
        result.do_bench_ms = res.do_bench.median_ms
    if res.counters is not None:
        result.counters = summarize_counters(res.counters, task.kernel, pk)
        dur = result.counters.get("duration_s")
        pflops = pk.flops_per_s(the_dtype) if pk else None
        if dur and result.flops and pflops:  # our FLOP count over ncu's time, against our table
            result.counters["compute_pct_of_table_peak"] = 100 * result.flops / dur / pflops
    if res.proton is not None:
        p = res.proton
        result.proton = {"error": p.error} if p.error is not None else proton.parse_hatchet(p.hatchet)
    return result


def summarize_counters(raw: CounterCapture, kernel: str, pk: Peak | None) -> dict:
    """Parse what the worker brought back from ncu / rocprofv3 into a small summary."""
    tool = raw.tool
    if raw.error and not raw.stdout and not raw.kernel_trace:
        return {"tool": tool, "error": raw.error}
    if tool == "ncu":
        summary = ncu.summarize(ncu.parse_ncu_csv(raw.stdout), kernel)
        if summary is None:
            return {"tool": tool, "error": raw.error or "ncu profiled no kernel"}
        out = {"tool": tool, **summary.to_json()}
        if pk and summary.dram_tbs is not None:
            out["dram_pct_of_table_peak"] = 100 * summary.dram_tbs / pk.hbm_tbs
        return out
    if tool == "rocprofv3":
        trace = rocprof.summarize_trace(rocprof.parse_kernel_trace(raw.kernel_trace), kernel, skip=3)
        out = {"tool": tool, **(trace or {})}
        if raw.compute_analyze:
            tables = rocprof.parse_compute_analyze(raw.compute_analyze)
            sol = next((t for title, t in tables.items() if "Speed-of-Light" in title), {})
            out["speed_of_light"] = {m: rocprof.sol_metric(sol, m) for m in sol}
        return out
    return {"tool": tool, "error": f"unknown counter tool {tool}"}


def tasks_in(path: str | Path) -> list[Task]:
    """The kernels of a file that have a task (for the editor's "Profile" lens). Runs nothing."""
    from argus.agent.task import tasks_for_file

    try:
        return tasks_for_file(path)
    except TaskError:
        return []
