"""The gate worker: the only code of the agent that imports the user's file, a candidate, torch and triton.

Run as a standalone script (`python worker.py request.json`) in a fresh subprocess with a timeout, so it
imports nothing from Argus. It speaks JSON lines on stdout prefixed with EVENT_PREFIX, ending with one
"result" (or "error") event. Modes, combinable in one request:
- `check` (gate 2): for each shape, two fresh random input sets A and B (never zeros or ones; new seed
  per trial), outputs poisoned (every float tensor torch allocates while the candidate runs is filled
  with NaN, and on a GPU the caching allocator is first flooded with NaN bytes), reference and
  candidate run in both orders (ref then candidate on A, candidate then ref on B), a dtype-aware norm
  and elementwise tolerance against the reference run on fp64 (CPU) / fp32 (GPU) inputs, the output
  must change when the inputs do, the candidate must not write its inputs or start threads;
- `time` (gate 3): kernel-only timing with CUDA events, the median of many runs, the L2 flushed before
  each run, inputs rotated among several random sets, for the candidate, the user's kernel and any
  `compare` callables (e.g. torch.matmul for cuBLAS), on the same inputs.
The reference is always loaded from the user's original file, never from the candidate.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import statistics
import sys
import threading
import time
import traceback

EVENT_PREFIX = "@@ARGUS-OPT@@ "
#: Tolerance on ||out - ref|| / ||ref|| by output dtype; fp32 allows tf32 tensor-core dots.
TOLERANCE = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 4e-3, "float64": 1e-9}


def emit(event: str, **data) -> None:
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": event, **data}) + "\n")
    sys.stdout.flush()


def load(path: str, name: str):
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def resolve(module, name: str):
    if hasattr(module, name):
        return getattr(module, name)
    head, _, attr = name.rpartition(".")
    if head:
        return getattr(importlib.import_module(head), attr)
    raise RuntimeError(f"{name!r} is neither defined in {module.__name__} nor importable")


def make_tensor(spec: dict, device: str, gen):
    """A fresh random tensor; floats are normal (or uniform) and never all zeros or ones."""
    import torch

    dtype = getattr(torch, spec["dtype"])
    shape = spec["shape"]
    if spec.get("init") == "randint" or not dtype.is_floating_point:
        high = 2 if dtype == torch.bool else spec.get("high", 100)
        return torch.randint(spec.get("low", 0), high, shape, generator=gen, device=device).to(dtype)
    if spec.get("init") == "rand":
        t = torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * 0.98 + 0.01
    else:
        t = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    return (t * spec.get("scale", 1.0)).to(dtype)


def input_set(shape: dict, device: str, seed: int) -> tuple[list, dict]:
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return [make_tensor(s, device, gen) for s in shape["inputs"]], dict(shape.get("args") or {})


def first(out):
    return out[0] if isinstance(out, tuple | list) else out


# ---------------------------------------------------------------------------------------------
# Poisoning: every float buffer the candidate allocates starts as NaN


class Poison:
    """While active, torch.empty / empty_like / empty_strided return NaN-filled float tensors."""

    NAMES = ("empty", "empty_like", "empty_strided")

    def __init__(self, device: str) -> None:
        import torch

        self.torch, self.device, self.saved = torch, device, {}

    def flood(self) -> None:
        """Fill free blocks of the CUDA caching allocator with 0xFF bytes (NaN in every float dtype)."""
        torch = self.torch
        if self.device != "cuda":
            return
        free, _ = torch.cuda.mem_get_info()
        size = min(int(free * 0.5), 8 << 30)
        if size > 0:
            buf = torch.empty(size, dtype=torch.uint8, device="cuda")
            buf.fill_(255)
            del buf

    def __enter__(self) -> Poison:
        torch = self.torch
        for name in self.NAMES:
            original = getattr(torch, name)
            self.saved[name] = original

            def poisoned(*args, _original=original, **kwargs):
                t = _original(*args, **kwargs)
                if t.is_floating_point():
                    t.fill_(float("nan"))
                return t

            setattr(torch, name, poisoned)
        self.flood()
        return self

    def __exit__(self, *exc) -> None:
        for name, original in self.saved.items():
            setattr(self.torch, name, original)


# ---------------------------------------------------------------------------------------------
# Gate 2


def upcast(args: list, device: str) -> list:
    import torch

    wide = torch.float64 if device == "cpu" else torch.float32
    return [a.to(wide) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def compare(out, ref, tol: float) -> tuple[bool, str, dict]:
    """Norm-based and elementwise comparison in fp64; NaN or inf where the reference is finite fails."""
    import torch

    if not isinstance(out, torch.Tensor):
        return False, f"the launcher returned {type(out).__name__}, not a tensor", {}
    if tuple(out.shape) != tuple(ref.shape):
        return False, f"output shape {tuple(out.shape)} != reference {tuple(ref.shape)}", {}
    o, r = out.double().cpu(), ref.double().cpu()
    finite = torch.isfinite(r)
    bad = finite & ~torch.isfinite(o)
    if bool(bad.any()):
        idx = [int(i) for i in bad.nonzero()[0]]
        return False, f"{int(bad.sum())} outputs are NaN/inf where the reference is finite, first at {idx}", {}
    o, r = torch.where(finite, o, 0.0), torch.where(finite, r, 0.0)
    denom = float(r.norm()) or 1.0
    rel = float((o - r).norm()) / denom
    rms = denom / math.sqrt(max(r.numel(), 1))
    err = (o - r).abs()
    limit = 12 * tol * (rms + r.abs())
    worst = float((err / limit).max()) if err.numel() else 0.0
    stats = {"rel_l2": rel, "tolerance": tol, "worst_elem_ratio": worst}
    if rel > tol:
        return False, f"relative L2 error {rel:.3g} > tolerance {tol:.3g}", stats
    if worst > 1.0:
        flat = int((err / limit).argmax())
        where = list(map(int, torch.unravel_index(torch.tensor(flat), r.shape)))
        return False, f"element {where} is off by {float(err.flatten()[flat]):.4g} (ref {float(r.flatten()[flat]):.4g})", stats
    return True, "", stats


def check_shape(ref_fn, cand_fn, shape: dict, device: str, seed: int, tol_override) -> dict:
    import torch

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    a_args, kw = input_set(shape, device, seed)
    b_args, _ = input_set(shape, device, seed + 7919)
    out: dict = {"shape": shape["name"], "sizes": shape.get("sizes", {})}
    threads0 = threading.active_count()
    # order 1: reference first, then the candidate
    ref_a = first(ref_fn(*upcast(a_args, device), **kw))
    sync()
    saved = [a.clone() if isinstance(a, torch.Tensor) else a for a in a_args]
    with Poison(device):
        cand_a = first(cand_fn(*a_args, **kw))
        sync()
    for i, (x, y) in enumerate(zip(a_args, saved, strict=True)):
        if isinstance(x, torch.Tensor) and not torch.equal(x, y):
            return {**out, "ok": False, "reason": f"the candidate wrote into input {i}"}
    # order 2: the candidate first, then the reference
    with Poison(device):
        cand_b = first(cand_fn(*b_args, **kw))
        sync()
    ref_b = first(ref_fn(*upcast(b_args, device), **kw))
    sync()
    if threading.active_count() > threads0:
        return {**out, "ok": False, "reason": "the candidate started a thread"}
    dtype = str(cand_a.dtype).removeprefix("torch.") if isinstance(cand_a, torch.Tensor) else "?"
    tol = float(tol_override or TOLERANCE.get(dtype, 1e-2))
    for label, c, r in (("set A", cand_a, ref_a), ("set B", cand_b, ref_b)):
        ok, why, stats = compare(c, r, tol)
        out.setdefault("stats", {})[label] = stats
        if not ok:
            return {**out, "ok": False, "reason": f"{label}: {why}"}
    if not torch.equal(ref_a.double().cpu(), ref_b.double().cpu()) and torch.equal(cand_a.cpu(), cand_b.cpu()):
        return {**out, "ok": False, "reason": "the output does not depend on the inputs (sets A and B gave the same)"}
    return {**out, "ok": True, "reason": "", "dtype": dtype}


# ---------------------------------------------------------------------------------------------
# Gate 3


def time_fn(fn, sets: list, timing: dict) -> dict:
    """Median of CUDA-event times of `fn` over rotating input sets, L2 flushed before each run."""
    import torch

    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(max(256 << 20, 2 * getattr(props, "L2_cache_size", 0)) // 4, dtype=torch.int32, device="cuda")
    fn(*sets[0][0], **sets[0][1])
    torch.cuda.synchronize()
    t0, i = time.perf_counter(), 0
    while time.perf_counter() - t0 < float(timing.get("warmup_ms", 200)) / 1e3 or i < 3:
        flush.zero_()
        args, kw = sets[i % len(sets)]
        fn(*args, **kw)
        i += 1
        if i % 4 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for j in range(5):
        args, kw = sets[j % len(sets)]
        fn(*args, **kw)
    e.record()
    torch.cuda.synchronize()
    est = max(s.elapsed_time(e) / 5, 1e-3)
    n = max(int(timing.get("min_reps", 10)), min(int(timing.get("max_reps", 200)), int(float(timing.get("rep_ms", 300)) / est)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for j in range(n):
        flush.zero_()
        args, kw = sets[j % len(sets)]
        starts[j].record()
        fn(*args, **kw)
        ends[j].record()
    torch.cuda.synchronize()
    times = sorted(a.elapsed_time(b) for a, b in zip(starts, ends, strict=True))
    return {"median_ms": statistics.median(times), "min_ms": times[0], "reps": n}


def time_shapes(req: dict, fns: dict, device: str) -> list[dict]:
    import torch

    results = []
    for k, shape in enumerate(req.get("time_shapes", [])):
        emit("progress", phase="timing", done=k, total=len(req["time_shapes"]))
        sets = [input_set(shape, device, int(req["seed"]) + 100 * k + j) for j in range(int(req.get("rotate", 3)))]
        row = {"shape": shape["name"], "sizes": shape.get("sizes", {}), "flops": shape.get("flops"), "bytes": shape.get("bytes")}
        for label, fn in fns.items():
            try:
                row[f"{label}_ms"] = time_fn(fn, sets, req.get("timing", {}))["median_ms"]
            except Exception as exc:
                row[f"{label}_error"] = f"{type(exc).__name__}: {exc}"[:400]
        results.append(row)
        del sets
        torch.cuda.empty_cache()
    return results


# ---------------------------------------------------------------------------------------------


def pick_device(backend: str) -> str:
    if backend == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if backend == "cuda":
        raise RuntimeError("no GPU visible to torch on this host")
    os.environ["TRITON_INTERPRET"] = "1"
    return "cpu"


def describe(device: str) -> dict:
    import torch

    info = {"device": device, "torch": torch.__version__, "host": os.uname().nodename}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(name=props.name, sm_count=props.multi_processor_count, capability=f"{props.major}.{props.minor}")
    else:
        info.update(name="CPU (Triton interpreter)")
    return info


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        req = json.load(f)
    try:
        device = pick_device(req.get("backend", "auto"))
        env = describe(device)
        emit("env", **env)
        original = load(req["original"], "argus_original")
        ref_fn = resolve(original, req["reference"]) if req.get("reference") else None
        base_fn = resolve(original, req["launcher"])
        cand_fn = resolve(load(req["candidate"], "argus_candidate"), req["launcher"]) if req.get("candidate") else None
        result: dict = {"env": env, "check": [], "timing": []}
        if req.get("check_shapes"):
            if ref_fn is None:
                raise RuntimeError("the task names no reference: gate 2 needs one (`reference = ...` in the task)")
            fn = cand_fn or base_fn
            for k, shape in enumerate(req["check_shapes"]):
                emit("progress", phase="check", done=k, total=len(req["check_shapes"]))
                row = check_shape(ref_fn, fn, shape, device, int(req["seed"]) + 1000 * k, req.get("tolerance"))
                result["check"].append(row)
                if not row["ok"]:
                    break
        all_ok = all(r["ok"] for r in result["check"])
        if req.get("time_shapes") and device == "cuda" and all_ok:
            fns = {}
            if cand_fn is not None:
                fns["candidate"] = cand_fn
            if req.get("time_baseline", True):
                fns["baseline"] = base_fn
            for name in req.get("compare", []):
                fns[name] = resolve(original, name)
            result["timing"] = time_shapes(req, fns, device)
        emit("result", **result)
        return 0
    except BaseException as exc:
        emit("error", message=f"{type(exc).__name__}: {exc}"[:2000], traceback=traceback.format_exc()[-4000:])
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
