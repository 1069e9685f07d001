"""The profiling worker: the only code that imports the user's kernel, torch and triton.

Run as a standalone script (`python worker.py request.json [counters-child]`) in a subprocess with a
timeout, locally or copied to a remote host, so it imports nothing from Argus but worker_schema.py
(the messages) and worker_counters.py (ncu, rocprof), staged next to it: otherwise only the
standard library, torch and triton of the interpreter it runs under. It reads a `WorkerRequest` and speaks in JSON lines on stdout (worker_schema.encode_event):
`Progress` events while it works, then one `WorkerResult` (or `WorkerError`).

Timing follows triton.testing.do_bench's method, with two additions the agent's gate needs:
inputs rotate among several freshly drawn random sets (never zeros), and the L2 is flushed by
writing a buffer larger than the cache before every timed launch; the median is reported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

try:  # staged next to this file (targets.py)
    import worker_counters as counters
    import worker_schema as schema
except ImportError:  # imported from its package rather than run as the staged script
    from argus.agent.profile import worker_counters as counters
    from argus.agent.profile import worker_schema as schema


def emit(message: schema.Message) -> None:
    sys.stdout.write(schema.encode_event(message) + "\n")
    sys.stdout.flush()


def progress(phase: str, done: int = 0, total: int = 0) -> None:
    emit(schema.Progress(phase=phase, done=done, total=total))


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


def describe(device: str) -> schema.DeviceInfo:
    import torch

    try:
        import triton

        triton_version = triton.__version__
    except Exception as exc:  # the report says why, the run goes on for torch-only tasks
        triton_version = f"unavailable: {exc}"
    common = dict(
        device=device,
        torch=torch.__version__,
        triton=triton_version,
        python=sys.version.split()[0],
        host=os.uname().nodename,
    )
    if device != "cuda":
        return schema.DeviceInfo(name="CPU (Triton interpreter)", backend="cpu", **common)
    props = torch.cuda.get_device_properties(0)
    return schema.DeviceInfo(
        name=props.name,
        backend="amd" if torch.version.hip else "nvidia",
        sm_count=props.multi_processor_count,
        l2_bytes=getattr(props, "L2_cache_size", 0),
        capability=f"{props.major}.{props.minor}",
        arch=getattr(props, "gcnArchName", None),
        **common,
    )


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


def make_tensor(spec: schema.InputTensor, device: str, gen):
    import torch

    dtype = getattr(torch, spec.dtype)
    if spec.init == "randint" or not dtype.is_floating_point:
        high = 2 if dtype == torch.bool else spec.high
        t = torch.randint(spec.low, high, spec.shape, generator=gen, device=device)
        return t.to(dtype)
    if spec.init == "rand":
        t = torch.rand(spec.shape, generator=gen, device=device, dtype=torch.float32)
    else:
        t = torch.randn(spec.shape, generator=gen, device=device, dtype=torch.float32)
    return (t * spec.scale).to(dtype)


class Runner:
    """Builds the callable to time, its input sets, and the reference, for either task kind."""

    def __init__(self, req: schema.WorkerRequest, device: str):
        import torch

        self.req, self.device = req, device
        self.module = load_module(req.file)
        self.sets: list[tuple[list, dict]] = []
        self.warnings: list[str] = []
        seed, n_sets = req.seed, req.input_sets
        if req.kind == "kernelbench":
            init = self.module.get_init_inputs()
            cls = getattr(self.module, req.launcher)
            torch.manual_seed(seed)
            self.model = cls(*init).to(device)
            self.ref_model = None
            if req.reference:
                torch.manual_seed(seed)  # same weights as the model under test
                self.ref_model = getattr(self.module, req.reference)(*init).to(device)
            for i in range(n_sets):
                torch.manual_seed(seed + 1 + i)
                args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in self.module.get_inputs()]
                self.sets.append((args, {}))
            self.fn = self.model
            self.ref = self.ref_model
        else:
            self.fn = resolve(self.module, req.launcher)
            self.ref = resolve(self.module, req.reference)
            for i in range(n_sets):
                gen = torch.Generator(device=device)
                gen.manual_seed(seed + 1 + i)
                args = [make_tensor(s, device, gen) for s in req.inputs]
                self.sets.append((args, dict(req.args)))
        for args, _ in self.sets[:1]:
            for i, a in enumerate(args):
                if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() and not a.any():
                    self.warnings.append(f"input {i} is all zeros: timings on zeros can be optimistic")

    def call(self, i: int = 0):
        args, kwargs = self.sets[i % len(self.sets)]
        return self.fn(*args, **kwargs)

    def dtype(self) -> str | None:
        if self.req.dtype:
            return self.req.dtype
        for a in self.sets[0][0]:
            if hasattr(a, "is_floating_point") and a.is_floating_point():
                return str(a.dtype).removeprefix("torch.")
        return None

    def counted_bytes(self, out) -> float:
        """Each input read once and each output written once: the fewest bytes the task must move."""
        import torch

        total = sum(a.numel() * a.element_size() for a in self.sets[0][0] if isinstance(a, torch.Tensor))
        if self.req.kind == "kernelbench":
            total += sum(p.numel() * p.element_size() for p in self.model.parameters())
        outs = out if isinstance(out, tuple | list) else [out]
        total += sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
        return float(total)

    def counted_flops(self) -> float | None:
        """FLOPs of the reference through torch's FlopCounterMode (matmul, conv, attention)."""
        target = self.ref if self.ref is not None else (self.fn if self.req.kind == "kernelbench" else None)
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


def time_gpu(runner: Runner, timing: schema.Timing) -> list[float]:
    import torch

    n_sets = len(runner.sets)
    props = torch.cuda.get_device_properties(0)
    flush_bytes = max(timing.flush_mb << 20, 2 * getattr(props, "L2_cache_size", 0))
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    # Warm up by wall time, not by count: GPUs boost from idle and settle to a sustained clock
    # under load, so timing a cold chip reports a speed it cannot hold (seen on the H200: 14%).
    t0 = time.perf_counter()
    i = 0
    while time.perf_counter() - t0 < timing.warmup_ms / 1e3:
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
    n_rep = int((timing.rep_ms or 300.0) / est)
    n_rep = max(timing.min_reps, min(timing.max_reps, n_rep))
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


def time_cpu(runner: Runner, timing: schema.Timing) -> list[float]:
    """Interpreter runs are slow: a few wall-clock runs, median reported, CPU time only."""
    t0 = time.perf_counter()
    runner.call(0)
    est = max((time.perf_counter() - t0) * 1e3, 1e-3)
    n_rep = max(3, min(timing.cpu_reps, int((timing.rep_ms or 100.0) / est)))
    times = []
    for i in range(n_rep):
        t0 = time.perf_counter()
        runner.call(i)
        times.append((time.perf_counter() - t0) * 1e3)
        progress("timing", i + 1, n_rep)
    return times


def do_bench_check(runner: Runner) -> schema.DoBench:
    """triton.testing.do_bench on the same callable, for the "within 5%" comparison."""
    import triton.testing

    times = triton.testing.do_bench(lambda: runner.call(0), warmup=25, rep=100, return_mode="all")
    return schema.DoBench(median_ms=statistics.median(times), times_ms=[float(t) for t in times])


# ---------------------------------------------------------------------------------------------
# Counters and traces: the profilers run this script again in counters-child mode (worker_counters.py)


def run_proton(runner: Runner, n: int = 10) -> schema.ProtonCapture:
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
        return schema.ProtonCapture(hatchet=json.load(f), launches=n)


def counters_child(req: schema.WorkerRequest) -> None:
    """Under ncu / rocprofv3: warm up (compile, autotune), then one profiled call in a profiler range."""
    import torch

    runner = Runner(req, "cuda")
    for i in range(3):
        runner.call(i)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    launches = req.counter_launches or (5 if torch.version.hip else 1)
    for i in range(launches):
        runner.call(i)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


# ---------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    req_path = argv[1]
    if len(argv) > 2 and argv[2] == "counters-child":  # under a profiler, which reads our stdout
        counters_child(read_request(req_path))
        return 0
    try:
        emit(measure(read_request(req_path), req_path))
        return 0
    except BackendMissing as exc:
        emit(schema.WorkerError(message=str(exc)))
        return 1
    except BaseException as exc:  # report everything, KeyboardInterrupt included, as one event
        message = f"{type(exc).__name__}: {exc}"
        emit(schema.WorkerError(message=message, traceback=traceback.format_exc()[-4000:]))
        return 1


def read_request(path: str) -> schema.WorkerRequest:
    with open(path) as f:
        return schema.WorkerRequest.from_dict(json.load(f), "request")


def measure(req: schema.WorkerRequest, req_path: str) -> schema.WorkerResult:
    """Run the task once (compile, check), time it, then take the captures that were asked for."""
    progress("start")
    device = pick_device(req.backend)
    env = describe(device)
    if req.backend in ("nvidia", "amd") and env.backend != req.backend:
        raise BackendMissing(f"backend {req.backend} asked for, but this host's GPU is {env.name}")
    progress("compile")
    runner = Runner(req, device)
    out = runner.call(0)
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
    progress("check")
    rel_error = runner.check(out) if req.check_reference else None
    flops, flops_source = req.flops, "task formula"
    if flops is None:
        flops = runner.counted_flops()
        flops_source = "FlopCounterMode on the reference" if flops else None
    work_bytes, bytes_source = req.bytes, "task formula"
    if work_bytes is None:
        work_bytes, bytes_source = runner.counted_bytes(out), "inputs + outputs, once each"
    progress("timing", 0, 1)
    times = time_gpu(runner, req.timing) if device == "cuda" else time_cpu(runner, req.timing)
    do_bench = None
    if req.do_bench_check and device == "cuda":
        progress("do_bench")
        do_bench = do_bench_check(runner)
    return schema.WorkerResult(
        env=env,
        median_ms=statistics.median(times),
        times_ms=times,
        dtype=runner.dtype(),
        rel_error=rel_error,
        flops=flops,
        flops_source=flops_source,
        bytes=work_bytes,
        bytes_source=bytes_source,
        warnings=runner.warnings,
        do_bench=do_bench,
        counters=capture_counters(req, req_path, env),
        proton=capture_proton(req, runner),
    )


def capture_counters(
    req: schema.WorkerRequest, req_path: str, env: schema.DeviceInfo
) -> schema.CounterCapture | None:
    """The hardware counters asked for ("auto": ncu on NVIDIA, rocprof on AMD), or why there are none."""
    mode = req.counters
    if mode == "auto":
        mode = "rocprof" if env.backend == "amd" else "ncu"
    if mode == "none":
        return None
    if env.device != "cuda":
        return schema.CounterCapture(tool=mode, error="hardware counters need a GPU; this run used the CPU")
    progress("counters")
    run = counters.run_ncu if mode == "ncu" else counters.run_rocprof
    return run(req_path, req.counter_timeout)


def capture_proton(req: schema.WorkerRequest, runner: Runner) -> schema.ProtonCapture | None:
    if not req.proton or runner.device != "cuda":
        return None
    progress("proton")
    try:
        return run_proton(runner)
    except Exception as exc:
        return schema.ProtonCapture(error=f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
