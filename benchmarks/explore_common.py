"""The parts every exploration call shares (benchmarks/kernels_explore_s*.py): inputs, checked
candidates, one interleaved measurement per shape, and the loop over parts with a time budget.

Each session's call differs in what it compares (pins, attention layouts, a branch against main);
how a candidate is checked before timing, how the sides are timed together and how a part stops
when its budget is spent are the same, so they live here once and the calls stay comparable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

import torch

from benchmarks.kernels import gemm_inputs, rel_err, rotation
from benchmarks.kernels_timing import interleaved, interleaved_graphs

Side = tuple[str, Callable[[], object]]


def gemm_rotation(m: int, n: int, k: int) -> Callable[[], tuple]:
    """Operand pairs handed out in turn, enough of them that a repeat does not hit the L2."""
    return rotation(gemm_inputs(m, n, k), 2 * (m * k + k * n + m * n))


def pinned_gemm_side(gemm_mod: ModuleType, a: torch.Tensor, b: torch.Tensor, ref: torch.Tensor,
                     entry: tuple | None, nxt: Callable[[], tuple]) -> tuple[Side | None, str]:
    """One GEMM plan (the launcher's default when entry is None, else that pin), checked against ref.

    Returns (the side to time, "") when the output is right, or (None, why) when the config does
    not compile, does not fit, or computes a wrong result: such a candidate is reported, never timed.
    """
    m, n = a.shape[0], b.shape[1]
    try:
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        choice = None if entry is None else gemm_mod.pinned_config(entry)
        plan = gemm_mod.make_plan(a, b, out, choice=choice)
        torch.cuda.synchronize()
        err = rel_err(out, ref)
        if err >= 1e-2:
            return None, f"WRONG rel err {err:.1e}"
    except Exception as exc:  # a config that does not compile or fit is reported, not fatal
        torch.cuda.synchronize()
        return None, f"ERR {type(exc).__name__}: {str(exc)[:120]}"

    def call() -> torch.Tensor:
        x, y = nxt()
        o = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        plan(x, y, o)
        return o

    return ("default" if entry is None else " ".join(str(v) for v in entry), call), ""


def gemm_pin_rows(gemm_mod: ModuleType, m: int, n: int, k: int, entries: Iterable[tuple | None],
                  sides: list[Side] | None = None) -> tuple[list[Side], list[dict], Callable[[], tuple]]:
    """cuBLAS first (the ratio's reference), then every entry that checks out; rows for the others."""
    shape = f"{m}x{n}x{k}"
    a, b = gemm_inputs(m, n, k)()
    ref = torch.matmul(a, b)
    nxt = gemm_rotation(m, n, k)
    sides = [("cuBLAS", lambda: torch.matmul(*nxt())), *(sides or [])]
    rows: list[dict] = []
    for entry in entries:
        name = "default" if entry is None else " ".join(str(v) for v in entry)
        t0 = time.time()
        side, note = pinned_gemm_side(gemm_mod, a, b, ref, entry, nxt)
        print(f"  check {shape:20s} {name:48s} {note or 'ok'} ({time.time() - t0:.0f}s)", flush=True)
        if side is None:
            rows.append({"family": "gemm", "shape": shape, "variant": name, "ms": None, "note": note})
        else:
            sides.append(side)
    return sides, rows, nxt


def cudnn_attention(causal: bool, gqa: bool) -> Callable[..., torch.Tensor]:
    """cuDNN's fused attention through SDPA, the reference every attention candidate is checked on."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    return run


def attention_rows(attn_mod: ModuleType, b: int, h: int, h_kv: int, s: int, d: int, causal: bool,
                   variants: list[tuple[str, dict]]) -> tuple[str, list[Side], list[dict], float]:
    """cuDNN first, then every (name, attention kwargs) variant whose output matches cuDNN's."""
    shape = f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}"

    def make() -> tuple:
        return tuple(torch.randn(b, hh, s, d, device="cuda", dtype=torch.bfloat16) for hh in (h, h_kv, h_kv))

    nxt = rotation(make, 2 * (2 * b * h * s * d + 2 * b * h_kv * s * d))
    q, k, v = make()
    cudnn = cudnn_attention(causal, h != h_kv)
    ref = cudnn(q, k, v)
    sides: list[Side] = [("cuDNN", lambda: cudnn(*nxt()))]
    rows: list[dict] = []
    for name, kw in variants:
        t0 = time.time()
        try:
            got = attn_mod.attention(q, k, v, causal=causal, **kw)
            torch.cuda.synchronize()
            err = rel_err(got, ref)
            note = "" if err < 2e-2 else f"WRONG rel err {err:.1e}"
        except Exception as exc:  # a config that does not compile or fit is reported, not fatal
            torch.cuda.synchronize()
            err, note = None, f"ERR {type(exc).__name__}: {str(exc)[:120]}"
        print(f"  check {shape:30s} {name:40s} err {err if err is None else f'{err:.1e}'} {note} "
              f"({time.time() - t0:.0f}s)", flush=True)
        if note:
            rows.append({"family": "attention", "shape": shape, "variant": name, "ms": None, "note": note})
            continue
        sides.append((name, lambda kw=kw: attn_mod.attention(*nxt(), causal=causal, **kw)))
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return shape, sides, rows, flops


def timed_rows(family: str, shape: str, sides: list[Side], flops: float, graphs: bool = False) -> list[dict]:
    """One interleaved measurement of every side (the library first), and of graph replays when asked;
    a row per side with its ratio to the library (library ms / side ms) and both halves' ratios."""
    eager = interleaved([fn for _, fn in sides])
    replay = interleaved_graphs([fn for _, fn in sides]) if graphs else None
    rows = []
    for i, (name, _) in enumerate(sides):
        ratio = eager.median[0] / eager.median[i]
        graph = replay.median[0] / replay.median[i] if replay else None
        tflops = flops / eager.median[i] / 1e9
        rows.append({"family": family, "shape": shape, "variant": name, "ms": eager.median[i], "ratio": ratio,
                     "even_odd": eager.ratio(0, i)[1:], "tflops": tflops,
                     "graph_ms": replay.median[i] if replay else None, "graph_ratio": graph, "note": ""})
        halves = eager.ratio(0, i)
        graph_txt = f" graph {'n/a' if graph is None else f'{graph:.3f}'}" if graphs else ""
        print(f"{family:9s} {shape:34s} {name:48s} {eager.median[i]:9.4f} ms ratio {ratio:.3f} "
              f"(halves {halves[1]:.3f} {halves[2]:.3f}) {tflops:5.0f} TFLOP/s{graph_txt}", flush=True)
    return rows


def run_parts(jobs: dict[str, tuple[list[tuple], Callable[..., list[dict]]]], parts: str, budget_s: float,
              out_json: Path) -> list[dict]:
    """Each named part's shapes in turn; past a part's budget its remaining shapes are skipped (and
    said), one shape's failure is reported and the others still run, and the rows so far are written
    to out_json after every shape, so a call the device tool stops keeps what it measured."""
    rows: list[dict] = []
    for part in parts.split(","):
        shapes, run = jobs[part]
        start = time.time()
        for shape in shapes:
            if time.time() - start > budget_s:
                print(f"SKIP {part} {shape}: budget spent", flush=True)
                continue
            try:
                rows += run(*shape)
            except Exception as exc:  # one shape's failure is reported; the others still run
                print(f"ERROR {part} {shape}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            torch.cuda.empty_cache()
            out_json.write_text(json.dumps(rows, indent=1))
    return rows
