"""Session 9's exploration call: this branch's launchers against main's, and new GEMM pins, one device call.

    python benchmarks/kernels_explore_s9.py --out DIR --before DIR_OF_MAIN_KERNELS [--part moe,gemm]

DIR_OF_MAIN_KERNELS holds main's knowledge/kernels/{moe,gemm}.py (copied there with `git show` before
the call); they are loaded as separate modules, so "before" and "after" run side by side in one process
with their own autotuners (main's gemm.py imports this branch's gemm_splitk.py, which is unchanged).
moe: per benchmark shape, main's `fused_moe` (per-call JIT/autotuner launches, six allocations, the
torch alignment past 2**17 pairs x experts, one tuning key for 1024-16384 tokens) against this
branch's (a plan per shape with direct launches, the align as a grid of 128-pair programs, tuning
keyed on the row-block bucket, two more configs per GEMM) and torch._grouped_mm: checked against the
baseline, then one interleaved eager measurement and one of CUDA-graph replays.
gemm: per benchmark shape, main's `matmul` against this branch's (the stream-K kernel's workspace
offsets now computed inside its two branches) and cuBLAS, plus the candidate pins of GEMM below.
Method: benchmarks/kernels_timing.py (interleaved repetitions, L2 flushed before every call). Writes
DIR/explore-s9.json after every shape; the table printed last is what the cards quote.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402
from argus.knowledge.kernels import moe as moe_mod  # noqa: E402

from benchmarks.explore_common import Side, gemm_inputs, gemm_pin_rows, gemm_rotation, run_parts, timed_rows  # noqa: E402
from benchmarks.kernels import L2_BYTES, gemm_shapes, moe_shapes, rel_err, rotation, torch_moe  # noqa: E402
from benchmarks.kernels_timing import clocks_up  # noqa: E402

# Candidate pins (gemm.TUNED's entry layout plus GROUP_M): the rows below 0.99 of cuBLAS in session 8.
GEMM = {
    (4096, 4096, 4096): [("tma_host", 1, 128, 256, 64, 8, 4, True), ("tma_host", 1, 128, 256, 64, 8, 4, True, 4),
                         ("streamk_host", 1, 128, 256, 64, 8, 4, True)],
    (4096, 14336, 4096): [("tma_host", 1, 128, 256, 64, 8, 4, True)],
    (128, 4096, 4096): [("tma_host", 1, 64, 64, 128, 4, 8, False), ("tma_host", 1, 64, 64, 256, 4, 3, False),
                        ("splitk_host", 2, 64, 64, 128, 4, 6, False)],
    (1024, 1024, 1024): [("tma_host", 1, 64, 128, 128, 4, 3, False), ("tma_host", 1, 64, 128, 64, 4, 6, False)],
}


def load_module(path: Path, name: str) -> ModuleType:
    """A copy of a kernels module from another revision, under its own name."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def check(label: str, got: torch.Tensor, ref: torch.Tensor, tol: float) -> bool:
    err = rel_err(got, ref)
    print(f"  check {label:60s} rel err {err:.1e} {'ok' if err < tol else 'WRONG'}", flush=True)
    return err < tol


def moe_shape(before: ModuleType, name: str, t: int, e: int, top_k: int, hdim: int, inter: int,
              renorm: bool) -> list[dict]:
    def make_w() -> tuple:
        return (torch.randn(e, 2 * inter, hdim, device="cuda", dtype=torch.bfloat16) / math.sqrt(hdim),
                torch.randn(e, hdim, inter, device="cuda", dtype=torch.bfloat16) / math.sqrt(inter))

    def make() -> tuple:
        return (torch.randn(t, hdim, device="cuda", dtype=torch.bfloat16),
                torch.randn(t, e, device="cuda", dtype=torch.float32))

    shape = f"{name} E{e} top{top_k} {hdim}/{inter} T{t}"
    w1, w2 = make_w()
    x, logits = make()
    ref = torch_moe(x, w1, w2, logits, top_k, renorm, True)
    wsets = [(w1, w2)] + [make_w() for _ in range(max(0, math.ceil(2 * L2_BYTES / (6 * e * hdim * inter)) - 1))]
    nxt_x = rotation(make, 2 * t * hdim + 4 * t * e)
    state = {"i": 0}

    def args() -> tuple:
        state["i"] = (state["i"] + 1) % len(wsets)
        xx, lg = nxt_x()
        return xx, *wsets[state["i"]], lg

    sides = [("torch._grouped_mm", lambda: torch_moe(*args(), top_k, renorm, True))]
    for label, mod in (("main fused_moe", before), ("branch fused_moe", moe_mod)):
        ok = True
        for _ in range(2):  # the first call builds (and tunes), the second runs the plan
            xx, lg = make()
            ok &= check(f"{shape} {label}", mod.fused_moe(xx, w1, w2, lg, top_k, renorm),
                        torch_moe(xx, w1, w2, lg, top_k, renorm, True), 3e-2)
        ok &= check(f"{shape} {label} first inputs", mod.fused_moe(x, w1, w2, logits, top_k, renorm), ref, 3e-2)
        if ok:
            sides.append((label, lambda mod=mod: mod.fused_moe(*args(), top_k, renorm)))
    return timed_rows("moe", shape, sides, 6.0 * t * top_k * hdim * inter, graphs=True)


def gemm_shape(before: ModuleType, m: int, n: int, k: int) -> list[dict]:
    """main's and this branch's `matmul`, then the candidate pins, against cuBLAS in one measurement."""
    shape = f"{m}x{n}x{k}"
    a, b = gemm_inputs(m, n, k)()
    ref = torch.matmul(a, b)
    nxt = gemm_rotation(m, n, k)
    branch_sides: list[Side] = []
    for label, mod in (("main matmul", before), ("branch matmul", gemm_mod)):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        mod.matmul(a, b, out=out)
        if check(f"{shape} {label}", out, ref, 1e-2):
            branch_sides.append((label, lambda mod=mod: mod.matmul(*nxt())))
    sides, _, _ = gemm_pin_rows(gemm_mod, m, n, k, GEMM.get((m, n, k), []), branch_sides)
    return timed_rows("gemm", shape, sides, 2.0 * m * n * k, graphs=True)


def summary(rows: list[dict]) -> None:
    print("\nper shape (ratio = library ms / side ms; eager, graph):")
    for r in rows:
        if r["variant"] in ("cuBLAS", "torch._grouped_mm"):
            continue
        g = r["graph_ratio"]
        print(f"  {r['family']:5s} {r['shape']:34s} {r['variant']:44s} {r['ratio']:.3f}  {'n/a' if g is None else f'{g:.3f}'}")
    for fam in ("gemm", "moe"):
        for variant in ("main", "branch"):
            ratios = [r["ratio"] for r in rows if r["family"] == fam and r["variant"].startswith(variant)]
            graphs = [r["graph_ratio"] for r in rows if r["family"] == fam and r["variant"].startswith(variant)
                      and r["graph_ratio"]]
            if ratios:
                gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
                gg = math.exp(sum(map(math.log, graphs)) / len(graphs)) if graphs else float("nan")
                print(f"  geomean {fam} {variant}: {gm:.3f} over {len(ratios)} shapes (graphs {gg:.3f})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--part", default="moe,gemm")
    ap.add_argument("--budget-s", type=float, default=200.0, help="seconds per part before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    before_moe = load_module(args.before / "moe.py", "argus_main_moe")
    before_gemm = load_module(args.before / "gemm.py", "argus_main_gemm")
    clocks_up()
    jobs = {"moe": (moe_shapes(False), lambda *s: moe_shape(before_moe, *s)),
            "gemm": (gemm_shapes(False), lambda *s: gemm_shape(before_gemm, *s))}
    rows = run_parts(jobs, args.part, args.budget_s, args.out / "explore-s9.json")
    summary(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
