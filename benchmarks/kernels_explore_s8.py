"""Session 8's exploration call: GEMM and attention variants not measured before, one device call.

    python benchmarks/kernels_explore_s8.py --out DIR [--budget-s 200] [--part gemm,attention | gemm2 | gemm3]

gemm: on the rows still below cuBLAS, the launcher's plan against (a) the persistent kernel with its
tile loop warp-specialized (`tl.range(..., warp_specialize=True)`, unflattened: a producer warp group
for the TMA loads), (b) other GROUP_M bands for the large rows' L2 reuse, (c) non-persistent grids and
split-K with more CTAs than SMs where the persistent grid leaves SMs idle (14336 / 128 = 112 tiles for
132 SMs at M = 16 and 128). Entries as gemm.TUNED holds them, plus GROUP_M and WARP_SPEC.
attention: the one-warpgroup tile (session 7's pick) with Q K^T issued one block ahead (PIPE_QK, not
measured with this tile before) and lazy rescaling of the running output (LAZY: only when a row's
maximum grew by more than 2^8), and lazy rescaling on the other tiles the launcher takes.
gemm2 (the second call): stream-K over the partial last wave (gemm.gemm_streamk_host_kernel) on every
GEMM row but 16384^3, against the launcher's plan with the first call's pins. gemm3 (the third):
narrower 16-row tiles on the M = 16 rows, stream-K again on the large squares.
Every variant's output is checked against the library's before any timing; the correct ones and the
library are then timed in ONE interleaved measurement (benchmarks/kernels_timing.py). Writes
DIR/explore-s8.json after every shape; the table printed last is what the cards quote.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.knowledge.kernels import attention as attn_mod  # noqa: E402
from argus.knowledge.kernels import gemm as gemm_mod  # noqa: E402

from benchmarks.explore_common import attention_rows, gemm_pin_rows, run_parts, timed_rows  # noqa: E402
from benchmarks.kernels_timing import clocks_up  # noqa: E402

# (path, split, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, SUBTILE, GROUP_M, WARP_SPEC)
_BIG = [("tma_host", 1, 128, 256, 64, 8, 4, True, 8, False), ("tma_host", 1, 128, 256, 64, 8, 3, True, 16, False),
        ("tma_host", 1, 128, 256, 64, 8, 3, True, 8, True), ("tma_host", 1, 128, 256, 64, 8, 4, True, 8, True),
        ("tma_host", 1, 128, 128, 64, 8, 4, False, 8, True), ("tma_host", 1, 256, 128, 64, 8, 3, True, 8, False)]
GEMM = {
    (4096, 4096, 4096): _BIG,
    (4096, 14336, 4096): _BIG,
    (4096, 4096, 14336): _BIG[:4],
    (2048, 2048, 2048): [("tma_host", 1, 128, 256, 64, 8, 4, True, 8, True), ("tma_host", 1, 128, 256, 64, 8, 3, True, 8, True),
                         ("tma_host", 1, 128, 256, 64, 8, 3, False, 8, False), ("splitk_host", 1, 128, 256, 64, 8, 3, False)],
    (1024, 1024, 1024): [("tma_host", 1, 64, 128, 128, 4, 4, False, 8, True), ("splitk_host", 1, 64, 128, 128, 4, 4, False),
                         ("splitk_host", 2, 128, 128, 64, 4, 4, False), ("splitk_host", 2, 64, 128, 128, 4, 3, False),
                         ("tma_host", 1, 64, 64, 128, 4, 4, False)],
    (16, 14336, 4096): [("splitk_host", 1, 16, 128, 128, 4, 6, False), ("splitk_host", 1, 16, 64, 128, 4, 4, False),
                        ("splitk_host", 2, 16, 128, 128, 4, 4, False), ("splitk_host", 3, 16, 128, 128, 4, 4, False),
                        ("splitk_host", 2, 16, 64, 128, 4, 4, False)],
    (128, 14336, 4096): [("splitk_host", 1, 64, 128, 64, 4, 6, False), ("splitk_host", 1, 64, 128, 128, 4, 3, False),
                         ("tma_host", 1, 128, 128, 64, 8, 5, False, 8, True), ("splitk_host", 2, 128, 128, 64, 4, 5, False),
                         ("splitk_host", 1, 128, 128, 64, 4, 5, False)],
    (128, 4096, 14336): [("splitk_host", 2, 128, 64, 64, 4, 8, False), ("splitk_host", 4, 128, 128, 128, 4, 3, False),
                         ("splitk_host", 2, 64, 64, 128, 4, 5, False), ("splitk_host", 3, 128, 64, 128, 4, 4, False)],
}

# Second call: stream-K (gemm.gemm_streamk_host_kernel; the split field is 1 + the full waves handed to
# stream-K with the partial last one), after the first call's pins went into gemm.TUNED.
_SK_BIG = [("streamk_host", 1, 128, 256, 64, 8, 3, True), ("streamk_host", 2, 128, 256, 64, 8, 3, True),
           ("streamk_host", 1, 128, 256, 64, 8, 4, True)]
GEMM2 = {
    (4096, 4096, 4096): _SK_BIG,
    (4096, 14336, 4096): _SK_BIG,
    (4096, 4096, 14336): _SK_BIG,
    (2048, 2048, 2048): [("streamk_host", 1, 128, 256, 64, 8, 4, True), ("streamk_host", 1, 128, 128, 64, 8, 4, False)],
    (1024, 1024, 1024): [("streamk_host", 1, 128, 128, 64, 4, 4, False), ("streamk_host", 1, 64, 128, 128, 4, 4, False),
                         ("streamk_host", 1, 128, 128, 128, 8, 3, False)],
    (128, 14336, 4096): [("streamk_host", 1, 128, 128, 64, 4, 5, False), ("streamk_host", 1, 64, 128, 64, 4, 6, False)],
    (16, 14336, 4096): [("streamk_host", 1, 16, 128, 128, 4, 6, False), ("streamk_host", 1, 16, 64, 128, 4, 6, False)],
    (128, 4096, 14336): [("streamk_host", 1, 128, 64, 64, 4, 8, False), ("streamk_host", 1, 128, 128, 64, 4, 5, False)],
    (16, 4096, 14336): [("streamk_host", 1, 16, 128, 128, 4, 6, False), ("streamk_host", 1, 16, 64, 128, 4, 6, False)],
    (128, 4096, 4096): [("streamk_host", 1, 64, 64, 128, 4, 6, False), ("streamk_host", 1, 128, 64, 64, 4, 8, False)],
    (16, 4096, 4096): [("streamk_host", 1, 16, 128, 128, 4, 6, False)],
    (8192, 8192, 8192): [("streamk_host", 1, 128, 256, 64, 8, 4, True), ("streamk_host", 2, 128, 256, 64, 8, 4, True)],
}

# Third call: narrower 16-row tiles (more CTAs, more bytes in flight) on the M = 16 rows, which move
# bytes (32-117 MB of B) at 2.5-3.0 TB/s, under the 4.3 TB/s a copy reaches; stream-K again where it
# won or tied (8192^3, 4096x14336x4096), and on 16384^3.
_SK8 = ("streamk_host", 1, 128, 256, 64, 8, 4, True)
GEMM3 = {
    (16, 4096, 4096): [("splitk_host", 2, 16, 64, 128, 4, 6, False), ("splitk_host", 4, 16, 128, 128, 4, 4, False),
                       ("splitk_host", 1, 16, 32, 128, 4, 6, False), ("splitk_host", 2, 16, 32, 128, 4, 4, False),
                       ("splitk_host", 1, 16, 32, 128, 2, 6, False)],
    (16, 4096, 14336): [("splitk_host", 4, 16, 128, 128, 4, 4, False), ("splitk_host", 2, 16, 64, 128, 4, 6, False),
                        ("splitk_host", 4, 16, 64, 128, 4, 4, False), ("splitk_host", 2, 16, 32, 128, 4, 6, False)],
    (16, 14336, 4096): [("splitk_host", 1, 16, 32, 128, 4, 4, False), ("splitk_host", 1, 16, 32, 128, 4, 6, False),
                        ("splitk_host", 1, 16, 64, 128, 4, 5, False), ("splitk_host", 1, 16, 64, 256, 4, 3, False),
                        ("splitk_host", 1, 16, 32, 128, 2, 6, False)],
    (4096, 14336, 4096): [("streamk_host", 1, 128, 256, 64, 8, 3, True), _SK8],
    (8192, 8192, 8192): [_SK8, ("streamk_host", 1, 128, 256, 64, 8, 3, True)],
    (16384, 16384, 16384): [_SK8],
}

# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK, MAXNREG, WARP_SPEC, LAZY)
_WG = (128, 64, 4, 2)
ATTN = {
    128: [(*_WG, False, None, False, True), (*_WG, True, None, False, False), (*_WG, True, None, False, True),
          (64, 64, 4, 3, False, None, False, True), (128, 128, 8, 2, False, None, False, True)],
    64: [(128, 64, 4, 3, False, None, False, True), (128, 128, 4, 2, False, None, False, True),
         (64, 64, 4, 3, False, None, False, True)],
}
ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 4096, 128, False), (4, 32, 32, 16384, 128, False),
               (4, 32, 32, 1024, 128, True), (4, 32, 32, 4096, 128, True), (4, 32, 32, 16384, 128, True),
               (4, 32, 8, 4096, 128, False), (16, 16, 16, 1024, 64, False), (4, 32, 32, 4096, 64, True)]


def attn_label(c: tuple) -> str:
    bm, bn, w, st, pipe, cap, ws, lazy = c
    return (f"{bm}x{bn} w{w} s{st}{' pipe_qk' if pipe else ''}{f' r{cap}' if cap else ''}{' ws' if ws else ''}"
            f"{' lazy' if lazy else ''}")


def gemm_shape(m: int, n: int, k: int, table: dict | None = None) -> list[dict]:
    """The launcher's plan and each entry of table (GEMM) against cuBLAS: checked, then one interleaved
    measurement."""
    sides, rows, _ = gemm_pin_rows(gemm_mod, m, n, k, [None, *(GEMM if table is None else table)[(m, n, k)]])
    return rows + timed_rows("gemm", f"{m}x{n}x{k}", sides, 2.0 * m * n * k)


def attention_shape(b: int, h: int, h_kv: int, s: int, d: int, causal: bool) -> list[dict]:
    """The launcher's default and each ATTN candidate against cuDNN: checked, then one interleaved measurement."""
    variants = [("default", {})] + [
        (f"host {attn_label(c)}", {"pinned": attn_mod.config(*c[:6], warp_spec=c[6], lazy=c[7]), "host_desc": True})
        for c in ATTN[d] if not (causal and c[0] % c[1])]
    shape, sides, rows, flops = attention_rows(attn_mod, b, h, h_kv, s, d, causal, variants)
    return rows + timed_rows("attention", shape, sides, flops)


def summary(rows: list[dict]) -> None:
    """The fastest correct variant of each shape against the launcher's default there."""
    print("\nfastest correct variant per shape (ratio = library ms / variant ms):")
    shapes = dict.fromkeys(r["shape"] for r in rows)
    for shape in shapes:
        timed = [r for r in rows if r["shape"] == shape and r.get("ms") and r["variant"] not in ("cuBLAS", "cuDNN")]
        if not timed:
            continue
        best = min(timed, key=lambda r: r["ms"])
        default = next((r for r in timed if r["variant"] == "default"), None)
        base = f" (default {default['ratio']:.3f})" if default else ""
        print(f"  {shape:30s} {best['variant']:48s} ratio {best['ratio']:.3f}{base}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--part", default="gemm,attention")
    ap.add_argument("--budget-s", type=float, default=200.0, help="seconds per part before shapes are skipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    clocks_up()
    jobs = {"gemm": (list(GEMM), gemm_shape), "attention": (ATTN_SHAPES, attention_shape),
            "gemm2": (list(GEMM2), lambda *shape: gemm_shape(*shape, table=GEMM2)),
            "gemm3": (list(GEMM3), lambda *shape: gemm_shape(*shape, table=GEMM3))}
    rows = run_parts(jobs, args.part, args.budget_s, args.out / "explore-s8.json")
    summary(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
