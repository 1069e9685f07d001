"""The profiling worker: the only code that imports the user's kernel, torch and triton.

Run as a standalone script (`python worker.py request.json [counters-child]`) in a subprocess with a
timeout, locally or copied to a remote host, so it imports nothing from Argus: only the standard
library, torch and triton of the interpreter it runs under. It speaks in JSON lines on stdout, each
prefixed with EVENT_PREFIX so the user's own prints cannot be mistaken for results:
progress events while it works, then one "result" (or "error") event.

Timing follows triton.testing.do_bench's method, with two additions the agent's gate needs:
inputs rotate among several freshly drawn random sets (never zeros), and the L2 is flushed by
writing a buffer larger than the cache before every timed launch; the median is reported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

EVENT_PREFIX = "@@ARGUS@@ "

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


def emit(event: str, **data) -> None:
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": event, **data}) + "\n")
    sys.stdout.flush()


def progress(phase: str, done: int = 0, total: int = 0) -> None:
    emit("progress", phase=phase, done=done, total=total)


# ---------------------------------------------------------------------------------------------
# Environment


class BackendMissing(RuntimeError):
    """The backend asked for is not on this host: the user's request, not a bug (no traceback)."""


def pick_device(requested: str) -> str:
    """'cuda' (NVIDIA or ROCm torch) or 'cpu' (Triton interpreter). Must run before triton loads."""
    if requested == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu"
    try:
        import torch
    except ModuleNotFoundError as exc:
        raise BackendMissing(f"{exc.name} is not installed for {sys.executable}; profiling needs torch and triton") from None

    if torch.cuda.is_available():
        return "cuda"
    if requested in ("nvidia", "amd", "cuda"):
        raise BackendMissing(f"no GPU visible to torch on this host (backend {requested} was asked for)")
    os.environ["TRITON_INTERPRET"] = "1"
    return "cpu"


def describe(device: str) -> dict:
    import torch

    info = {
        "device": device,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "host": os.uname().nodename,
    }
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception as exc:  # the report says why, the run goes on for torch-only tasks
        info["triton"] = f"unavailable: {exc}"
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(
            name=props.name,
            backend="amd" if torch.version.hip else "nvidia",
            sm_count=props.multi_processor_count,
            l2_bytes=getattr(props, "L2_cache_size", 0),
            capability=f"{props.major}.{props.minor}",
            arch=getattr(props, "gcnArchName", None),
        )
    else:
        info.update(name="CPU (Triton interpreter)", backend="cpu")
    return info


# ---------------------------------------------------------------------------------------------
# The task


def load_module(path: str):
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location("argus_task_module", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["argus_task_module"] = module
    spec.loader.exec_module(module)
    return module


def resolve(module, name: str | None):
    """A function of the task file, or an importable dotted name such as torch.matmul."""
    if not name:
        return None
    if hasattr(module, name):
        return getattr(module, name)
    head, _, attr = name.rpartition(".")
    if head:
        return getattr(importlib.import_module(head), attr)
    raise RuntimeError(f"{name!r} is neither defined in the task file nor importable")


def make_tensor(spec: dict, device: str, gen):
    import torch

    dtype = getattr(torch, spec["dtype"])
    shape = spec["shape"]
    if spec.get("init") == "randint" or not dtype.is_floating_point:
        high = 2 if dtype == torch.bool else spec.get("high", 100)
        t = torch.randint(spec.get("low", 0), high, shape, generator=gen, device=device)
        return t.to(dtype)
    if spec.get("init") == "rand":
        t = torch.rand(shape, generator=gen, device=device, dtype=torch.float32)
    else:
        t = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    return (t * spec.get("scale", 1.0)).to(dtype)


class Runner:
    """Builds the callable to time, its input sets, and the reference, for either task kind."""

    def __init__(self, req: dict, device: str):
        import torch

        self.req, self.device = req, device
        self.module = load_module(req["file"])
        self.sets: list[tuple[list, dict]] = []
        self.warnings: list[str] = []
        seed = int(req.get("seed", 0))
        n_sets = max(1, int(req.get("input_sets", 3)))
        if req["kind"] == "kernelbench":
            init = self.module.get_init_inputs()
            cls = getattr(self.module, req["launcher"])
            torch.manual_seed(seed)
            self.model = cls(*init).to(device)
            self.ref_model = None
            if req.get("reference"):
                torch.manual_seed(seed)  # same weights as the model under test
                self.ref_model = getattr(self.module, req["reference"])(*init).to(device)
            for i in range(n_sets):
                torch.manual_seed(seed + 1 + i)
                args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in self.module.get_inputs()]
                self.sets.append((args, {}))
            self.fn = self.model
            self.ref = self.ref_model
        else:
            self.fn = resolve(self.module, req["launcher"])
            self.ref = resolve(self.module, req.get("reference"))
            for i in range(n_sets):
                gen = torch.Generator(device=device)
                gen.manual_seed(seed + 1 + i)
                args = [make_tensor(s, device, gen) for s in req["inputs"]]
                self.sets.append((args, dict(req.get("args") or {})))
        for args, _ in self.sets[:1]:
            for i, a in enumerate(args):
                if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() and not a.any():
                    self.warnings.append(f"input {i} is all zeros: timings on zeros can be optimistic")

    def call(self, i: int = 0):
        args, kwargs = self.sets[i % len(self.sets)]
        return self.fn(*args, **kwargs)

    def dtype(self) -> str | None:
        if self.req.get("dtype"):
            return self.req["dtype"]
        for a in self.sets[0][0]:
            if hasattr(a, "is_floating_point") and a.is_floating_point():
                return str(a.dtype).removeprefix("torch.")
        return None

    def counted_bytes(self, out) -> float:
        """Each input read once and each output written once: the fewest bytes the task must move."""
        import torch

        total = sum(a.numel() * a.element_size() for a in self.sets[0][0] if isinstance(a, torch.Tensor))
        if self.req["kind"] == "kernelbench":
            total += sum(p.numel() * p.element_size() for p in self.model.parameters())
        outs = out if isinstance(out, tuple | list) else [out]
        total += sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
        return float(total)

    def counted_flops(self) -> float | None:
        """FLOPs of the reference through torch's FlopCounterMode (matmul, conv, attention)."""
        target = (
            self.ref if self.ref is not None else (self.fn if self.req["kind"] == "kernelbench" else None)
        )
        if target is None:
            return None
        from torch.utils.flop_counter import FlopCounterMode

        args, kwargs = self.sets[0]
        counter = FlopCounterMode(display=False)
        with counter:
            target(*args, **kwargs)
        return float(counter.get_total_flops()) or None

    def check(self, out) -> float | None:
        """Relative error ||out - ref|| / ||ref|| against the reference, when there is one."""
        if self.ref is None:
            return None
        args, kwargs = self.sets[0]
        ref = self.ref(*args, **kwargs)
        out = out[0] if isinstance(out, tuple | list) else out
        ref = ref[0] if isinstance(ref, tuple | list) else ref
        o, r = out.double(), ref.double()
        denom = float(r.norm()) or 1.0
        return float((o - r).norm()) / denom


# ---------------------------------------------------------------------------------------------
# Timing


def time_gpu(runner: Runner, timing: dict) -> list[float]:
    import torch

    n_sets = len(runner.sets)
    props = torch.cuda.get_device_properties(0)
    flush_bytes = max(int(timing.get("flush_mb", 256)) << 20, 2 * getattr(props, "L2_cache_size", 0))
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    # Warm up by wall time, not by count: GPUs boost from idle and settle to a sustained clock
    # under load, so timing a cold chip reports a speed it cannot hold (seen on the H200: 14%).
    t0 = time.perf_counter()
    i = 0
    while time.perf_counter() - t0 < float(timing.get("warmup_ms", 250)) / 1e3:
        flush.zero_()
        runner.call(i)
        i += 1
        if i % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(10):
        flush.zero_()
        runner.call(i)
    end.record()
    torch.cuda.synchronize()
    est = max(start.elapsed_time(end) / 10, 1e-3)
    n_rep = int(float(timing.get("rep_ms", 300)) / est)
    n_rep = max(int(timing.get("min_reps", 10)), min(int(timing.get("max_reps", 1000)), n_rep))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    step = max(1, n_rep // 20)
    for i in range(n_rep):
        flush.zero_()
        starts[i].record()
        runner.call(i % n_sets)
        ends[i].record()
        if i % step == 0:
            progress("timing", i, n_rep)
    torch.cuda.synchronize()
    progress("timing", n_rep, n_rep)
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def time_cpu(runner: Runner, timing: dict) -> list[float]:
    """Interpreter runs are slow: a few wall-clock runs, median reported, CPU time only."""
    t0 = time.perf_counter()
    runner.call(0)
    est = max((time.perf_counter() - t0) * 1e3, 1e-3)
    n_rep = max(3, min(int(timing.get("cpu_reps", 10)), int(timing.get("rep_ms", 100) / est)))
    times = []
    for i in range(n_rep):
        t0 = time.perf_counter()
        runner.call(i)
        times.append((time.perf_counter() - t0) * 1e3)
        progress("timing", i + 1, n_rep)
    return times


def do_bench_check(runner: Runner) -> dict:
    """triton.testing.do_bench on the same callable, for the "within 5%" comparison."""
    import triton.testing

    times = triton.testing.do_bench(lambda: runner.call(0), warmup=25, rep=100, return_mode="all")
    return {"median_ms": statistics.median(times), "times_ms": times}


# ---------------------------------------------------------------------------------------------
# Counters: the worker runs itself again under the profiler, in counters-child mode


def find_tool(name: str, extra: list[str]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for path in extra:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def run_ncu(req_path: str, timeout: float) -> dict:
    import glob

    ncu = find_tool(
        "ncu", ["/usr/local/cuda/bin/ncu", *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))]
    )
    if ncu is None:
        return {"tool": "ncu", "error": "ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin"}
    child = [sys.executable, os.path.abspath(__file__), req_path, "counters-child"]
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
            return {**result, "error": f"ncu did not finish in {timeout:.0f} s"}
        result.update(
            command=cmd[: -len(child)],
            rc=proc.returncode,
            stdout=proc.stdout[-4_000_000:],
            stderr=proc.stderr[-4000:],
        )
        if proc.returncode == 0 and '"ID"' in proc.stdout:
            return result
        text = proc.stdout + proc.stderr
        bad = [m for m in metrics if m in text and m not in NCU_CORE_METRICS]
        if not bad and "metric" not in text.lower():
            break
        metrics = [m for m in metrics if m not in bad] if bad else list(NCU_CORE_METRICS)
        result.setdefault("dropped_metrics", []).extend(bad)
    result["error"] = f"ncu failed (exit {result.get('rc')}): " + _tail(
        result.get("stdout", "") + result.get("stderr", "")
    )
    return result


def run_rocprof(req_path: str, timeout: float) -> dict:
    rocprof = find_tool("rocprofv3", ["/opt/rocm/bin/rocprofv3"])
    if rocprof is None:
        return {"tool": "rocprofv3", "error": "rocprofv3 not found on PATH or in /opt/rocm/bin"}
    out_dir = tempfile.mkdtemp(prefix="argus-rocprof-")
    child = [sys.executable, os.path.abspath(__file__), req_path, "counters-child"]
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
        return {**result, "error": f"rocprofv3 did not finish in {timeout:.0f} s"}
    result.update(rc=proc.returncode, stderr=proc.stderr[-4000:])
    for root, _, files in os.walk(out_dir):
        for f in files:
            if f.endswith(("kernel_trace.csv", "kernel_stats.csv")):
                with open(os.path.join(root, f)) as fh:
                    key = "kernel_trace" if f.endswith("kernel_trace.csv") else "kernel_stats"
                    result[key] = fh.read()[-4_000_000:]
    shutil.rmtree(out_dir, ignore_errors=True)
    if "kernel_trace" not in result:
        result["error"] = f"rocprofv3 wrote no kernel trace (exit {proc.returncode}): {_tail(proc.stderr)}"
        return result
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
    return result


def _workload_dir(work: str) -> str:
    for root, _, files in os.walk(work):
        if "pmc_perf.csv" in files:
            return root
    return work


def run_proton(runner: Runner, n: int = 10) -> dict:
    """Triton's Proton around a few launches; the hatchet JSON goes back for the parser."""
    import torch
    import triton.profiler as proton

    path = os.path.join(tempfile.mkdtemp(prefix="argus-proton-"), "argus")
    proton.start(path, hook="triton")
    for i in range(n):
        runner.call(i)
    torch.cuda.synchronize()
    proton.finalize()
    with open(path + ".hatchet") as f:
        return {"tool": "proton", "hatchet": json.load(f), "launches": n}


def _tail(text: str, n: int = 600) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-6:])[-n:]


def counters_child(req: dict) -> None:
    """Under ncu / rocprofv3: warm up (compile, autotune), then one profiled call in a profiler range."""
    import torch

    runner = Runner(req, "cuda")
    for i in range(3):
        runner.call(i)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    launches = int(req.get("counter_launches", 1 if runner.device == "cuda" and not torch.version.hip else 5))
    for i in range(launches):
        runner.call(i)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


# ---------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    req_path = argv[1]
    with open(req_path) as f:
        req = json.load(f)
    if len(argv) > 2 and argv[2] == "counters-child":
        counters_child(req)
        return 0
    try:
        progress("start")
        device = pick_device(req.get("backend", "auto"))
        env = describe(device)
        emit("env", **env)
        want = req.get("backend", "auto")
        if want in ("nvidia", "amd") and env.get("backend") != want:
            raise BackendMissing(f"backend {want} asked for, but this host's GPU is {env.get('name')}")
        progress("compile")
        runner = Runner(req, device)
        out = runner.call(0)
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
        result: dict = {"env": env, "warnings": runner.warnings, "dtype": runner.dtype()}
        progress("check")
        result["rel_error"] = runner.check(out) if req.get("check", True) else None
        result["flops"] = req.get("flops")
        if result["flops"] is None:
            result["flops"] = runner.counted_flops()
            result["flops_source"] = "FlopCounterMode on the reference" if result["flops"] else None
        else:
            result["flops_source"] = "task formula"
        result["bytes"] = req.get("bytes")
        result["bytes_source"] = "task formula"
        if result["bytes"] is None:
            result["bytes"], result["bytes_source"] = runner.counted_bytes(out), "inputs + outputs, once each"
        progress("timing", 0, 1)
        timing = req.get("timing", {})
        times = time_gpu(runner, timing) if device == "cuda" else time_cpu(runner, timing)
        result["times_ms"] = times
        result["median_ms"] = statistics.median(times)
        if req.get("do_bench_check") and device == "cuda":
            progress("do_bench")
            result["do_bench"] = do_bench_check(runner)
        counters = req.get("counters", "none")
        if counters == "auto":
            counters = {"nvidia": "ncu", "amd": "rocprof"}.get(env.get("backend", ""), "ncu")
        timeout = float(req.get("counter_timeout", 300))
        if counters != "none" and device != "cuda":
            result["counters"] = {
                "tool": counters,
                "error": "hardware counters need a GPU; this run used the CPU",
            }
        elif counters in ("ncu", "rocprof"):
            progress("counters")
            result["counters"] = (run_ncu if counters == "ncu" else run_rocprof)(req_path, timeout)
        if req.get("proton") and device == "cuda":
            progress("proton")
            try:
                result["proton"] = run_proton(runner)
            except Exception as exc:
                result["proton"] = {"tool": "proton", "error": f"{type(exc).__name__}: {exc}"}
        emit("result", **result)
        return 0
    except BackendMissing as exc:
        emit("error", message=str(exc))
        return 1
    except BaseException as exc:  # report everything, KeyboardInterrupt included, as one event
        emit("error", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-4000:])
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
