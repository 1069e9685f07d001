"""The fourth sweep (session 6): the three pins the last benchmark run recorded, then the remaining losers.

    python benchmarks/kernels_explore.py --out DIR --family gemm_pins,attention_pins   (then _pins2)

GEMM: 1024^3 with BLOCK_K 128, 128x4096x14336 split 2 with BLOCK_K 128, then 128x4096x4096 and
16x14336x4096 with more tile shapes (BLOCK_N 32 without a split, split 4 of 128-wide tiles).
Attention: every benchmark shape, one-tile kernel with host descriptors, the configs that won somewhere
in the earlier sweeps pinned, against the autotuned launcher ("default"), so that a fixed config per
regime (head dim, causal, sequence length) can replace the autotuner; plus two untried layouts: a
256-row tile over four warpgroups (one CTA per SM sharing each K/V block among 256 queries) and the
two-CTA 128x64 tile with Q K^T issued one block ahead. kernels_explore.Sweep checks every variant's
output against the library's before timing it. Outputs: benchmarks/results/kernels-explore-h200-pins{,2}.txt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.kernels_explore_host import split_label, sweep_pinned_attention, sweep_pinned_gemms

if TYPE_CHECKING:
    from benchmarks.kernels_explore import Sweep

# (path, split, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, SUBTILE), as gemm.TUNED holds them.
PINS_GEMM = {
    (1024, 1024, 1024): [("tma_host", 1, 64, 128, 128, 4, 4, False), ("tma_host", 1, 64, 128, 128, 4, 3, False),
                         ("tma_host", 1, 64, 128, 128, 4, 5, False), ("tma_host", 1, 128, 64, 128, 4, 4, False),
                         ("tma_host", 1, 64, 128, 128, 8, 4, False)],
    (128, 4096, 14336): [("splitk_host", 2, 128, 64, 128, 4, 4, False), ("splitk_host", 2, 128, 64, 128, 4, 3, False),
                         ("splitk_host", 2, 128, 64, 128, 4, 5, False), ("splitk_host", 2, 128, 64, 64, 4, 6, False),
                         ("splitk_host", 4, 128, 128, 64, 8, 4, False), ("splitk_host", 4, 128, 128, 128, 8, 3, False)],
    (128, 4096, 4096): [("splitk_host", 2, 128, 64, 64, 4, 7, False), ("splitk_host", 2, 128, 64, 128, 4, 4, False),
                        ("splitk_host", 2, 128, 64, 128, 4, 5, False), ("splitk_host", 4, 128, 128, 64, 8, 4, False),
                        ("splitk_host", 4, 128, 128, 128, 8, 3, False), ("tma_host", 1, 128, 32, 128, 4, 5, False),
                        ("tma_host", 1, 128, 32, 64, 4, 8, False)],
    (16, 14336, 4096): [("tma_host", 1, 64, 128, 128, 4, 4, False), ("tma_host", 1, 64, 128, 128, 4, 5, False),
                        ("splitk_host", 2, 64, 256, 64, 4, 4, False), ("splitk_host", 2, 64, 128, 128, 4, 4, False)],
}


def sweep_gemm_pins(sw: Sweep) -> None:
    sweep_pinned_gemms(sw, PINS_GEMM, split_label)


# The benchmark's attention shapes (B, H, H_KV, S, D, causal), the furthest from cuDNN first.
PINS_ATTN_SHAPES = [(4, 32, 32, 1024, 128, False), (4, 32, 32, 2048, 128, False), (4, 32, 32, 1024, 128, True),
                    (4, 32, 32, 2048, 128, True), (4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 128, True),
                    (4, 32, 32, 16384, 128, False), (4, 32, 32, 8192, 128, False), (4, 32, 32, 8192, 128, True),
                    (4, 32, 32, 16384, 128, True), (4, 32, 8, 4096, 128, False), (4, 32, 8, 4096, 128, True),
                    (4, 32, 8, 16384, 128, True), (16, 16, 16, 1024, 64, False), (4, 32, 32, 4096, 64, True)]
# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK, MAXNREG) per head dim.
PINS_ATTN = {128: [(128, 64, 8, 2, False, 128), (64, 64, 4, 3, False, None), (128, 128, 8, 3, False, None),
                   (128, 64, 8, 3, False, None), (256, 64, 16, 2, False, 128), (128, 64, 8, 2, True, 128)],
             64: [(128, 128, 8, 2, False, 128), (128, 64, 8, 4, False, None), (64, 64, 4, 3, False, None),
                  (256, 64, 16, 2, False, 128)]}


def sweep_attention_pins(sw: Sweep) -> None:
    def configs(d: int, causal: bool, s: int) -> list[tuple]:
        # the pipelined loop only on two non-causal rows: it lost before
        return [c for c in PINS_ATTN[d] if not (c[4] and (causal or s > 4096))]

    sweep_pinned_attention(sw, PINS_ATTN_SHAPES, ("default", {}), configs)


# Second call of the session: the pins above as the launcher's defaults, and grids that keep two CTAs
# per SM (96 KB of shared memory each: split 3-4 of 128x64 tiles, or split 1, one tile per CTA, where a
# persistent walk of more tiles than SMs would leave the last round half empty).
PINS2_GEMM = {
    (128, 4096, 4096): [("splitk_host", 4, 128, 64, 64, 4, 4, False), ("splitk_host", 4, 128, 64, 64, 4, 3, False),
                        ("splitk_host", 3, 128, 64, 64, 4, 4, False), ("splitk_host", 2, 128, 128, 64, 8, 4, False)],
    (128, 4096, 14336): [("splitk_host", 4, 128, 64, 64, 4, 4, False), ("splitk_host", 3, 128, 64, 64, 4, 4, False)],
    (128, 14336, 4096): [("splitk_host", 1, 128, 64, 64, 4, 4, False), ("splitk_host", 1, 128, 64, 128, 4, 2, False),
                         ("splitk_host", 1, 128, 128, 64, 8, 4, False)],
    (16, 14336, 4096): [("splitk_host", 1, 64, 64, 128, 4, 4, False), ("splitk_host", 1, 64, 128, 128, 4, 4, False),
                        ("splitk_host", 2, 64, 128, 128, 4, 2, False)],
    (16, 4096, 4096): [("splitk_host", 4, 64, 64, 128, 4, 4, False), ("splitk_host", 2, 64, 64, 128, 4, 4, False)],
    (8192, 8192, 8192): [("tma_host", 1, 128, 256, 64, 8, 4, True), ("tma_host", 1, 128, 256, 64, 8, 3, True)],
}
PINS2_ATTN_SHAPES = [(4, 32, 8, 4096, 128, False), (4, 32, 8, 4096, 128, True), (4, 32, 8, 16384, 128, True),
                     (4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 128, True), (4, 32, 32, 2048, 128, False)]
PINS2_ATTN = [(128, 64, 8, 4, False, None), (128, 64, 8, 2, False, 128), (64, 64, 4, 3, False, None)]


def sweep_gemm_pins2(sw: Sweep) -> None:
    sweep_pinned_gemms(sw, PINS2_GEMM, lambda e: f"{e[0]}{e[1]} {e[2]}x{e[3]}x{e[4]} w{e[5]} s{e[6]}{' sub' if e[7] else ''}")


def sweep_attention_pins2(sw: Sweep) -> None:
    sweep_pinned_attention(sw, PINS2_ATTN_SHAPES, ("default", {}), lambda d, causal, s: PINS2_ATTN)


PINS_SWEEPS = {"gemm_pins": sweep_gemm_pins, "attention_pins": sweep_attention_pins,
               "gemm_pins2": sweep_gemm_pins2, "attention_pins2": sweep_attention_pins2}
