"""Reference kernels against the libraries PyTorch ships, on one GPU.

    python benchmarks/kernels.py --out DIR [--family gemm,attention,moe] [--quick]

Per shape: our kernel and the baseline (torch.matmul / cuBLAS; SDPA with its fastest backend of cuDNN,
flash and efficient; torch._grouped_mm, or a loop of matmuls where it is missing, with its rows per
expert counted by scatter_add so that it never syncs the host; the older bincount baseline is timed
too, as base_bincount_ms), the ratio
baseline_time / our_time (> 1 means ours is faster), TFLOP/s and % of the 989 TFLOP/s dense bf16 peak,
and the geomean ratio per family. Measurement follows the device METHOD: fresh random inputs (never
zeros), correctness checked against the baseline before timing, inputs rotated over enough copies that
one pass of the rotation exceeds twice the 60 MB L2, and ours and the library timed in one interleaved
measurement per row (benchmarks/kernels_timing.py: a warm-up of both right before, repetitions
alternating between the two, the L2 flushed before every call of either, medians of many; then the
same with one CUDA graph per side), so that the ratio measures the kernels and not the order in which
they were timed. Each row also gives the ratio of the even and of the odd repetitions apart.
Writes kernels-<gpu>.json (every number) and kernels-<gpu>.md (the table) into DIR after each shape.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402
from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402
from argus.knowledge.kernels import moe as moe_mod  # noqa: E402

from benchmarks.kernels_timing import interleaved, interleaved_graphs  # noqa: E402

PEAK_TFLOPS = 989.0
L2_BYTES = 60 * 2**20


def rotation(make: Callable[[], tuple], bytes_per_set: int) -> Callable[[], tuple]:
    """Several input sets, handed out in turn, so that repeated runs do not measure the L2."""
    copies = max(1, min(16, math.ceil(2 * L2_BYTES / max(bytes_per_set, 1))))
    sets = [make() for _ in range(copies)]
    state = {"i": 0}

    def nxt() -> tuple:
        state["i"] = (state["i"] + 1) % copies
        return sets[state["i"]]

    return nxt


def bench(fn: Callable[[], object]) -> float:
    """Median milliseconds of do_bench (events around each call, L2 cleared by do_bench too)."""
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def quick_bench(fn: Callable[[], object]) -> float:
    """Median ms; shorter than bench() so that an exploration sweep (kernels_explore*.py) fits one call."""
    return float(triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median"))


def gemm_sweep_inputs(sw: object, m: int, n: int, k: int) -> tuple:
    """One GEMM shape of an exploration sweep (kernels_explore*.py): its label, a rotation of fresh
    inputs (so timing does not run from a warm L2), the first inputs and their reference product,
    and the cuBLAS baseline in ms, already recorded in `sw` (a `Sweep`)."""

    make = gemm_inputs(m, n, k)
    shape = f"{m}x{n}x{k}"
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    a, b = make()
    base = quick_bench(lambda: torch.matmul(*nxt()))
    sw.record("gemm", shape, "cuBLAS", base, 0.0, "baseline", base)  # type: ignore[attr-defined]
    return shape, nxt, a, b, torch.matmul(a, b), base


def sweep_gemm_plan(sw: object, gemm: tuple, label: str, choice: object) -> None:
    """One GEMM config of a sweep: its plan built on the first inputs (checked against the reference),
    then timed on the rotation, through `sw.try_variant` (a `Sweep`). `gemm` is what
    `gemm_sweep_inputs` returned; choice is `gemm.pinned_config(entry)`, or None for the default."""
    shape, nxt, a, b, ref, base = gemm
    m, n = a.shape[0], b.shape[1]
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    holder: dict = {}

    def run() -> torch.Tensor:
        holder["plan"] = gemm_mod.make_plan(a, b, out, choice=choice)
        return out

    def timed() -> None:
        aa, bb = nxt()
        holder["plan"](aa, bb, torch.empty((m, n), device="cuda", dtype=torch.bfloat16))

    sw.try_variant("gemm", shape, label, run, ref, timed, 1e-2, base)  # type: ignore[attr-defined]


def gemm_inputs(m: int, n: int, k: int) -> Callable[[], tuple]:
    """A maker of one GEMM operand pair, B scaled so that the product stays near unit size."""

    def make() -> tuple:
        return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / math.sqrt(k))

    return make


def bench_graph(fn: Callable[[], object]) -> float | None:
    """Median milliseconds of CUDA-graph replays: the kernels' time without Python launch overhead."""
    try:
        fn()
        torch.cuda.synchronize()
        return float(triton.testing.do_bench_cudagraph(fn, rep=100, return_mode="median"))
    except Exception:
        torch.cuda.synchronize()
        return None


def paired(sides: list[Callable[[], object]], graphs: bool = True) -> dict:
    """Ours (sides[0]) against the library (sides[1]), timed in one interleaved measurement, eager and
    then as CUDA-graph replays (benchmarks/kernels_timing.py): the row's ms, the ratio of the even and
    of the odd repetitions apart, and the 20th-80th percentile ms of each side."""
    eager = interleaved(sides)
    replay = interleaved_graphs(sides) if graphs else None
    return {
        "ours_ms": eager.median[0],
        "base_ms": eager.median[1],
        "ratio_halves": eager.ratio(1)[1:],
        "spread_ms": (eager.spread(0), eager.spread(1)),
        "reps": len(eager.samples[0]),
        "graph_ms": (replay.median[0], replay.median[1]) if replay else None,
        "graph_ratio_halves": replay.ratio(1)[1:] if replay else None,
    }


def rel_err(x: torch.Tensor, y: torch.Tensor) -> float:
    x, y = x.float(), y.float()
    if not torch.isfinite(x).all():
        return float("inf")
    return float((x - y).norm() / y.norm().clamp_min(1e-12))


def best_config(kernel: object) -> str | None:
    cfg = getattr(kernel, "best_config", None)
    return None if cfg is None else str(cfg)


# ---------------------------------------------------------------- GEMM
def gemm_shapes(quick: bool) -> list[tuple[int, int, int]]:
    squares = [(s, s, s) for s in (1024, 2048, 4096, 8192, 16384)]
    llm = [(m, n, k) for m in (16, 128, 4096) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))]
    return (squares[:3] + llm[:3]) if quick else squares + llm


def run_gemm(m: int, n: int, k: int) -> dict:
    make = gemm_inputs(m, n, k)

    a, b = make()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm_mod.matmul(a, b, out=out)
    err = rel_err(out, torch.matmul(a, b))
    nxt = rotation(make, 2 * (m * k + k * n + m * n))
    sides = [lambda: gemm_mod.matmul(*nxt()), lambda: torch.matmul(*nxt())]
    timing = paired(sides)
    if (m, n, k) in gemm_mod.TUNED:
        path, split, cfg = gemm_mod.pinned_config(gemm_mod.TUNED[(m, n, k)])
        config = f"pinned {path}: {cfg}"
    else:
        split = gemm_mod.choose_split_k(m, n, k, torch.cuda.get_device_properties(0).multi_processor_count)
        config = best_config(gemm_mod.gemm_tma_host_kernel if split == 1 else gemm_mod.gemm_splitk_kernel)
    return {
        "shape": f"{m}x{n}x{k}",
        "flops": 2.0 * m * n * k,
        "baseline": "torch.matmul (cuBLAS)",
        "rel_err": err,
        "split_k": split,
        "config": config,
        **timing,
    }


# ---------------------------------------------------------------- attention
def attention_shapes(quick: bool) -> list[tuple[int, int, int, int, int, bool]]:
    seqs = (1024, 4096) if quick else (1024, 2048, 4096, 8192, 16384)
    out = [(4, 32, 32, s, 128, c) for s in seqs for c in (False, True)]
    out += [(4, 32, 8, 4096, 128, False), (4, 32, 8, 4096, 128, True)]  # GQA 32/8
    if not quick:
        out += [(4, 32, 8, 16384, 128, True), (16, 16, 16, 1024, 64, False), (4, 32, 32, 4096, 64, True)]
    return out


def sdpa_backends() -> list[tuple[str, object]]:
    from torch.nn.attention import SDPBackend

    names = [("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION")]
    return [(label, getattr(SDPBackend, attr)) for label, attr in names if hasattr(SDPBackend, attr)]


def run_attention(b: int, h: int, h_kv: int, s: int, d: int, causal: bool) -> dict:
    from torch.nn.attention import sdpa_kernel

    def make() -> tuple:
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
        return q, k, v

    gqa = h != h_kv
    q, k, v = make()
    ours_out = attn_mod.attention(q, k, v, causal=causal)
    nxt = rotation(make, 2 * (2 * b * h * s * d + 2 * b * h_kv * s * d))
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    base_by_backend: dict[str, float | str] = {}
    err = None
    for label, backend in sdpa_backends():

        def call(backend=backend) -> torch.Tensor:
            qq, kk, vv = nxt()
            with sdpa_kernel([backend]):
                return torch.nn.functional.scaled_dot_product_attention(
                    qq, kk, vv, is_causal=causal, enable_gqa=gqa
                )

        try:
            with sdpa_kernel([backend]):
                ref = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=gqa
                )
            err = rel_err(ours_out, ref) if err is None else err
            base_by_backend[label] = quick_bench(call)  # screening: the fastest is timed against ours below
        except Exception as exc:  # a backend that does not take this shape is skipped, and says why
            base_by_backend[label] = f"unsupported: {type(exc).__name__}: {str(exc)[:80]}"
    timed = {k2: t for k2, t in base_by_backend.items() if isinstance(t, float)}
    best = min(timed, key=timed.get)
    best_backend = dict(sdpa_backends())[best]

    def base_call() -> torch.Tensor:
        qq, kk, vv = nxt()
        with sdpa_kernel([best_backend]):
            return torch.nn.functional.scaled_dot_product_attention(
                qq, kk, vv, is_causal=causal, enable_gqa=gqa
            )

    timing = paired([lambda: attn_mod.attention(*nxt(), causal=causal), base_call])
    persistent = attn_mod.use_persistent(s, causal)  # the launcher's own choice of kernel
    host = not persistent and attn_mod.use_host_descriptors(s, causal)
    regime = attn_mod.regime_config(s, d, causal, h != h_kv) if host else None
    kernel = (attn_mod.attention_persistent_kernel if persistent
              else attn_mod.attention_fwd_host_kernel if host else attn_mod.attention_fwd_kernel)
    return {
        "shape": f"B{b} H{h}/{h_kv} S{s} D{d} {'causal' if causal else 'full'}",
        "flops": flops,
        "baseline": f"SDPA {best}",
        "backends": base_by_backend,
        "rel_err": err,
        "config": str(regime) if regime is not None else best_config(kernel),
        "regime_tile": regime is not None,  # a fixed tile of attention.REGIME_TILES, not the autotuner's
        "persistent": persistent,
        "host_descriptors": host,
        **timing,
    }


# ---------------------------------------------------------------- MoE
def moe_shapes(quick: bool) -> list[tuple[str, int, int, int, int, int, bool]]:
    tokens = (16, 1024, 16384) if quick else (16, 128, 1024, 4096, 16384)
    out = [("mixtral", t, 8, 2, 4096, 14336, True) for t in tokens]
    out += [("deepseek", t, 64, 6, 2048, 1408, False) for t in tokens]
    return out


def torch_moe(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    logits: torch.Tensor,
    top_k: int,
    renorm: bool,
    grouped: bool,
    sync_free: bool = True,
) -> torch.Tensor:
    """The baseline: torch routing and sorting, then torch._grouped_mm (or a loop of matmuls).

    sync_free counts the experts' rows with scatter_add; torch.bincount (sync_free=False, the baseline
    of the runs before 2026-12-01) reads the largest id back to the host, a sync that cost it 0.3 ms.
    """
    t, hdim = x.shape
    e = w1.shape[0]
    inter = w2.shape[2]
    probs = logits.float().softmax(-1)
    weights, ids = probs.topk(top_k, dim=-1)
    if renorm:
        weights = weights / weights.sum(-1, keepdim=True)
    flat = ids.flatten()
    order = torch.argsort(flat, stable=True)
    xs = x[order // top_k]
    if sync_free:
        counts = torch.zeros(e, dtype=torch.int64, device=x.device).scatter_add_(0, flat, torch.ones_like(flat))
    else:
        counts = torch.bincount(flat, minlength=e)
    if grouped:
        offs = torch.cumsum(counts, 0).to(torch.int32)
        hid = torch._grouped_mm(xs, w1.transpose(1, 2), offs=offs)
        act = (torch.nn.functional.silu(hid[:, :inter]) * hid[:, inter:]).contiguous()
        ys = torch._grouped_mm(act, w2.transpose(1, 2), offs=offs)
    else:
        ys = torch.empty((flat.numel(), hdim), dtype=x.dtype, device=x.device)
        start = 0
        for i, c in enumerate(counts.tolist()):
            if c:
                hid = xs[start : start + c] @ w1[i].t()
                ys[start : start + c] = (torch.nn.functional.silu(hid[:, :inter]) * hid[:, inter:]) @ w2[
                    i
                ].t()
            start += c
    ys = ys * weights.flatten()[order, None].to(ys.dtype)
    y = torch.empty_like(ys)
    y[order] = ys
    return y.view(t, top_k, hdim).sum(1, dtype=torch.float32).to(x.dtype)


def run_moe(name: str, t: int, e: int, top_k: int, hdim: int, inter: int, renorm: bool) -> dict:
    def make_w() -> tuple:
        w1 = torch.randn(e, 2 * inter, hdim, device="cuda", dtype=torch.bfloat16) / math.sqrt(hdim)
        w2 = torch.randn(e, hdim, inter, device="cuda", dtype=torch.bfloat16) / math.sqrt(inter)
        return w1, w2

    def make() -> tuple:
        x = torch.randn(t, hdim, device="cuda", dtype=torch.bfloat16)
        logits = torch.randn(t, e, device="cuda", dtype=torch.float32)
        return x, logits

    w1, w2 = make_w()
    x, logits = make()
    ours_out = moe_mod.fused_moe(x, w1, w2, logits, top_k, renorm)
    grouped = hasattr(torch, "_grouped_mm")
    try:
        ref = torch_moe(x, w1, w2, logits, top_k, renorm, grouped)
    except Exception:  # _grouped_mm present but refusing these operands: fall back to the loop
        grouped = False
        ref = torch_moe(x, w1, w2, logits, top_k, renorm, grouped)
    err = rel_err(ours_out, ref)
    weight_bytes = 2 * e * 3 * hdim * inter
    wsets = [(w1, w2)] + [make_w() for _ in range(max(0, math.ceil(2 * L2_BYTES / weight_bytes) - 1))]
    nxt_x = rotation(make, 2 * t * hdim + 4 * t * e)
    state = {"i": 0}

    def args() -> tuple:
        state["i"] = (state["i"] + 1) % len(wsets)
        xx, lg = nxt_x()
        return xx, *wsets[state["i"]], lg

    timing = paired([lambda: moe_mod.fused_moe(*args(), top_k, renorm),
                     lambda: torch_moe(*args(), top_k, renorm, grouped)], graphs=grouped)
    base_sync = quick_bench(lambda: torch_moe(*args(), top_k, renorm, grouped, sync_free=False))
    flops = 6.0 * t * top_k * hdim * inter
    return {
        "shape": f"{name} E{e} top{top_k} {hdim}/{inter} T{t}",
        "flops": flops,
        "baseline": "torch._grouped_mm" if grouped else "loop of torch.matmul",
        "base_bincount_ms": base_sync,
        "rel_err": err,
        "config": best_config(moe_mod.moe_gate_up_kernel),
        **timing,
    }


# ---------------------------------------------------------------- driver
FAMILIES = {
    "gemm": (gemm_shapes, run_gemm),
    "attention": (attention_shapes, run_attention),
    "moe": (moe_shapes, run_moe),
}
TOLERANCE = {"gemm": 1e-2, "attention": 2e-2, "moe": 3e-2}


def finish(row: dict, family: str) -> dict:
    row["family"] = family
    row["ratio"] = row["base_ms"] / row["ours_ms"]
    row["ours_tflops"] = row["flops"] / row["ours_ms"] / 1e9
    row["base_tflops"] = row["flops"] / row["base_ms"] / 1e9
    row["ours_pct_peak"] = 100.0 * row["ours_tflops"] / PEAK_TFLOPS
    g = row.get("graph_ms") or (None, None)
    row["graph_ratio"] = g[1] / g[0] if g and g[0] and g[1] else None
    row["correct"] = row["rel_err"] is not None and row["rel_err"] < TOLERANCE[family]
    return row


def geomeans(rows: list[dict], key: str = "ratio") -> dict[str, float]:
    out = {}
    for fam in FAMILIES:
        ratios = [r[key] for r in rows if r["family"] == fam and r.get(key)]
        if ratios:
            out[fam] = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    return out


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def table(rows: list[dict], means: dict[str, float]) -> str:
    lines = [
        "| family | shape | ours ms | baseline ms | baseline | ratio | ratio, even / odd reps | ours TFLOP/s "
        "| baseline TFLOP/s | ours % peak | rel err | graph ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = "" if r["correct"] else " FAIL"
        halves = r.get("ratio_halves")
        halves_txt = f"{halves[0]:.3f} / {halves[1]:.3f}" if halves else "n/a"
        lines.append(
            f"| {r['family']} | {r['shape']} | {r['ours_ms']:.4f} | {r['base_ms']:.4f} | {r['baseline']} | "
            f"{r['ratio']:.3f} | {halves_txt} | {r['ours_tflops']:.0f} | {r['base_tflops']:.0f} | "
            f"{r['ours_pct_peak']:.1f} | {r['rel_err']:.1e}{flag} | {_fmt(r.get('graph_ratio'))} |"
        )
    lines.append("")
    graph_means = geomeans(rows, "graph_ratio")
    lines.append(
        "| family | geomean ratio (baseline time / ours) | target 1.0 | geomean ratio, CUDA-graph replays |"
    )
    lines.append("|---|---|---|---|")
    for fam, g in means.items():
        lines.append(
            f"| {fam} | {g:.3f} | {'met' if g >= 1.0 else 'missed'} | {_fmt(graph_means.get(fam))} |"
        )
    return "\n".join(lines)


def write_results(out: Path, gpu: str, meta: dict, rows: list, errors: list) -> dict:
    """Write kernels-<gpu>.json and .md from the rows so far; returns the geomeans."""
    means = geomeans(rows)
    payload = {
        "meta": meta,
        "rows": rows,
        "geomean": means,
        "geomean_graph": geomeans(rows, "graph_ratio"),
        "errors": errors,
    }
    (out / f"kernels-{gpu}.json").write_text(json.dumps(payload, indent=1))
    (out / f"kernels-{gpu}.md").write_text(table(rows, means) + "\n")
    return means


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--family", default="gemm,attention,moe")
    ap.add_argument("--quick", action="store_true", help="a few shapes per family")
    ap.add_argument(
        "--budget-s",
        type=float,
        default=0.0,
        help="seconds per family; shapes left when it is spent are skipped and listed (0: no limit)",
    )
    ap.add_argument("--command", default=" ".join(sys.argv), help="recorded in the JSON")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    gpu = props.name.replace("NVIDIA ", "").split()[0].lower()
    meta = {
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "date": datetime.date.today().isoformat(),
        "command": args.command,
        "peak_tflops": PEAK_TFLOPS,
        "method": "interleaved eager and CUDA-graph timing per row, L2 flushed before every call "
                  "(benchmarks/kernels_timing.py); attention backends screened by do_bench first",
    }
    rows: list[dict] = []
    errors: list[str] = []
    # Clocks idle low (345 MHz seen): two seconds of large products bring them up before any timing.
    warm_a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + 2.0
    while time.time() < t_end:
        torch.matmul(warm_a, warm_a)
        torch.cuda.synchronize()
    del warm_a
    for fam in args.family.split(","):
        shapes_fn, run = FAMILIES[fam]
        fam_start = time.time()
        for shape in shapes_fn(args.quick):
            t0 = time.time()
            if args.budget_s and t0 - fam_start > args.budget_s:
                errors.append(f"{fam} {shape}: skipped, family budget of {args.budget_s:.0f} s spent")
                print("SKIP", errors[-1], flush=True)
                continue
            try:
                row = finish(run(*shape), fam)
            except Exception as exc:
                errors.append(f"{fam} {shape}: {type(exc).__name__}: {exc}"[:400])
                print("ERROR", errors[-1], flush=True)
                continue
            finally:
                with contextlib.suppress(Exception):
                    torch.cuda.empty_cache()
            row["wall_s"] = time.time() - t0
            rows.append(row)
            print(
                f"{fam:9s} {row['shape']:40s} ours {row['ours_ms']:8.4f} ms  base {row['base_ms']:8.4f} ms "
                f"ratio {row['ratio']:.3f} (halves {row['ratio_halves'][0]:.3f} {row['ratio_halves'][1]:.3f}) "
                f"graph {_fmt(row.get('graph_ratio'))}  {row['ours_tflops']:6.0f} TFLOP/s  err {row['rel_err']:.1e} "
                f"{'ok' if row['correct'] else 'FAIL'}  ({row['wall_s']:.0f}s)",
                flush=True,
            )
            write_results(args.out, gpu, meta, rows, errors)  # kept current: a run may be cut short
    means = write_results(args.out, gpu, meta, rows, errors)
    print(table(rows, means))
    return 0 if rows and all(r["correct"] for r in rows) and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
