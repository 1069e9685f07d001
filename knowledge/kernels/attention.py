"""Reference attention forward: softmax(Q K^T * scale) V, bf16, causal or not, head dim 64 or 128, GQA.

Layout (B, H, S, D) for Q and O and (B, H_KV, S, D) for K and V, contiguous (what SDPA takes).
One program owns BLOCK_M query rows of one head and streams the keys in BLOCK_N blocks:
- online softmax in base 2: scores are scaled by sm_scale * log2(e) once, so each probability is one
  exp2 (MUFU.EX2) instead of exp's extra multiply (card online-softmax-exp2);
- PIPE_QK configs issue the next block's Q K^T before this block's softmax, so the tensor cores and
  the exponentials overlap (card software-pipelining);
- causal: key blocks wholly above the diagonal are skipped, blocks wholly below it run without a mask,
  and only the diagonal blocks pay for masking; the longest query blocks are scheduled first
  (card causal-block-skipping);
- GQA: query head h reads KV head h // (H / H_KV); programs of heads that share a KV head run side by
  side, so the shared K/V stays in L2 (card gqa-head-packing);
- 3-D tensor descriptors ([B*H, S, D]) bound every load and store by the head's own S: a ragged last
  query block neither reads another head's keys as its own nor writes into the next head
  (card tma-descriptors);
- sm90 configs cap the registers at 128 per thread with two K/V stages, so two CTAs share an SM and one's
  softmax and epilogue overlap the other's matrix products (card software-pipelining); the tile the
  launcher takes on most D128 rows goes further: one warpgroup (4 warps) holds the whole 128-row tile
  with no cap, so the two warpgroups on an SM belong to two CTAs and never wait at each other's barrier;
- attention_fwd_host_kernel: the one-tile kernel over descriptors built on the host (kernel
  parameters): no program writes and fences its own four descriptors before its first load; the
  launcher's default, measured faster on every benchmark shape (card tma-descriptors); its tile is
  fixed by regime (REGIME_TILES: head dim, causal, S) where that beat the autotuner's pick;
- attention_persistent_kernel: two programs per SM walk the tiles; it beat the device-descriptor
  one-tile kernel on non-causal and short causal rows, no longer the host one (card persistent-kernels).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import install_allocator, interpreting, num_sms


def _configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "WARP_SPEC": False, "PIPE_QK": True, "LAZY": False},
                              num_warps=4, num_stages=1)]
    # WARP_SPEC (tl.range warp_specialize) stays off: on the H200 with Triton 3.6 it ran no faster at 8
    # warps and the compiler's Hopper warp-specialization pass crashed at 4 (kernels-h200-probe.txt).
    # BLOCK_N must divide BLOCK_M: the causal split into unmasked and diagonal blocks assumes it.
    return [config(*c) for c in ATTN_CONFIGS]


# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK[, MAXNREG]): the autotuner's space on sm90. The
# first H200 sweep (kernels-explore-h200-attention.txt) had 128x128 s3 winning at S1024 and S16384,
# 128x64 s3 at S4096 D128, 128x64 s4 at D64; PIPE_QK lost on every shape (0.50x against 0.60x of cuDNN
# at S1024), so it stays out of the space. The second (kernels-explore-h200-attention-2cta.txt): the
# register-capped two-CTA configs won all seven shapes, 128x64 s2 r128 at D128 (S1024 0.59 -> 0.68x
# full, 0.56 -> 0.67x causal; S4096 causal 0.71 -> 0.82x), 128x128 s2 r128 at D64 (0.83 -> 0.86x);
# the uncapped 128x64 s3 and 128x64 s4 stay as the fallbacks the autotuner may still prefer.
# MAXNREG caps the registers per thread (ptx .maxnreg): 128x64 w8 s2 at D128 needs 142 without the cap
# and then only one CTA (256 threads) fits a multiprocessor's 64K registers; at 128 (no spills in the
# sm90 build) and 98 KB of shared memory two CTAs share it, so one CTA's softmax, Q load and epilogue run
# while the other's matrix products do: the overlap a persistent grid would buy (card persistent-kernels).
# The D64 configs (107-122 registers) fit two CTAs already.
# Session 7 adds the one-warpgroup 128x64 w4 s2 tile (see REGIME_TILES) so that the rows the autotuner
# still picks for (GQA heads) can take it.
ATTN_CONFIGS = [(128, 64, 8, 2, False, 128), (128, 128, 8, 2, False, 128), (128, 64, 8, 3, False),
                (128, 64, 8, 4, False), (64, 64, 4, 3, False), (128, 64, 4, 2, False)]


def config(bm: int, bn: int, warps: int, stages: int, pipe: bool, maxnreg: int | None = None,
           warp_spec: bool = False, lazy: bool = False) -> triton.Config:
    """One attention config; the exploration sweep builds its variants through this too. warp_spec turns
    on tl.range(..., warp_specialize=True) for the key loop (off in every tuned config, see _configs);
    lazy rescales the running output only when a row's maximum grew by more than LAZY_GROWTH (see
    _softmax_update)."""
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "WARP_SPEC": warp_spec, "PIPE_QK": pipe, "LAZY": lazy},
                         num_warps=warps, num_stages=stages, maxnreg=maxnreg)


# Lazy rescaling keeps a row's reference maximum until the block maximum passes it by this much (log2
# units): the probabilities then stay below 2^8, far inside fp32 and bf16 range, and l_i is kept
# relative to the same stale maximum, so the normalised output is unchanged.
LAZY_GROWTH = 8.0


@triton.jit
def _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale,
                    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr, LAZY: tl.constexpr):
    """Folds one block of scores qk (and its values v) into the running (acc, l_i, m_i), in base 2.

    LAZY: the running output (BLOCK_M x HEAD_D fp32 multiplies, as many as the block's exponentials at
    HEAD_D = 2 * BLOCK_N) is rescaled only when some row's maximum grew by more than LAZY_GROWTH; the
    other blocks keep the stale maximum as their reference (card online-softmax-exp2).
    """
    if MASKED:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        keep = offs_n[None, :] < S
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    # m_i starts finite (-1e30), so m_new is finite even for a fully masked block: no inf - inf.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    if LAZY:
        if tl.max(m_new - m_i, 0) > 8.0:  # LAZY_GROWTH
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha
            acc = acc * alpha[:, None]
            m_i = m_new
        p = tl.math.exp2(qk * qk_scale - m_i[:, None])
        l_i = l_i + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc)
        return acc, l_i, m_i
    p = tl.math.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_new


@triton.jit
def _attn_block(
    acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m,
    lo, hi, S, qk_scale,
    HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    MASKED: tl.constexpr, CAUSAL: tl.constexpr, WARP_SPEC: tl.constexpr, LAZY: tl.constexpr,
):
    """Folds keys [lo, hi) into the running (acc, l_i, m_i). MASKED blocks apply the causal and length masks."""
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPEC):
        k = tl.reshape(k_desc.load([kv_row, start_n, 0]), (BLOCK_N, HEAD_D))
        qk = tl.dot(q, tl.trans(k))
        v = tl.reshape(v_desc.load([kv_row, start_n, 0]), (BLOCK_N, HEAD_D))
        acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale, BLOCK_N, MASKED, CAUSAL,
                                        LAZY)
    return acc, l_i, m_i


@triton.jit
def _attn_block_pipelined(
    acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m,
    lo, hi, S, qk_scale,
    HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, LAZY: tl.constexpr,
):
    """Unmasked keys [lo, hi), hi - lo a positive multiple of BLOCK_N, with Q K^T issued one block ahead.

    The scores of block j + 1 are asked of the tensor cores before the softmax of block j runs, so the
    (asynchronous) matrix product overlaps the exponentials instead of waiting behind them; the last
    block is peeled off so that no product is computed for a block past hi.
    """
    k = tl.reshape(k_desc.load([kv_row, lo, 0]), (BLOCK_N, HEAD_D))
    qk = tl.dot(q, tl.trans(k))
    for start_n in tl.range(lo, hi - BLOCK_N, BLOCK_N):
        k = tl.reshape(k_desc.load([kv_row, start_n + BLOCK_N, 0]), (BLOCK_N, HEAD_D))
        qk_next = tl.dot(q, tl.trans(k))
        v = tl.reshape(v_desc.load([kv_row, start_n, 0]), (BLOCK_N, HEAD_D))
        acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale, BLOCK_N, False, False,
                                        LAZY)
        qk = qk_next
    v = tl.reshape(v_desc.load([kv_row, hi - BLOCK_N, 0]), (BLOCK_N, HEAD_D))
    acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, hi - BLOCK_N, S, qk_scale, BLOCK_N, False, False,
                                    LAZY)
    return acc, l_i, m_i


@triton.jit
def _attn_tile(
    q_desc, k_desc, v_desc, o_desc, o_ptr, bh, pid_m, sm_scale, S, H, H_KV,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr, PIPE_QK: tl.constexpr,
    STORE_TMA: tl.constexpr, LAZY: tl.constexpr,
):
    """One output tile: BLOCK_M query rows (block pid_m) of head bh, normalised and stored."""
    batch = bh // H
    head = bh % H
    kv_row = batch * H_KV + head // (H // H_KV)
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = tl.reshape(q_desc.load([bh, start_m, 0]), (BLOCK_M, HEAD_D))
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): softmax in base 2

    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    if CAUSAL:
        full_end = start_m  # keys below the diagonal block: no mask needed
        stop = min(start_m + BLOCK_M, S)  # keys past the diagonal block: skipped
    else:
        full_end = (S // BLOCK_N) * BLOCK_N
        stop = S
    if PIPE_QK:
        if full_end > 0:
            acc, l_i, m_i = _attn_block_pipelined(acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, 0, full_end, S,
                                                  qk_scale, HEAD_D, BLOCK_M, BLOCK_N, LAZY)
    else:
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, 0, full_end, S, qk_scale,
                                    HEAD_D, BLOCK_M, BLOCK_N, False, CAUSAL, WARP_SPEC, LAZY)
    acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, full_end, stop, S, qk_scale,
                                HEAD_D, BLOCK_M, BLOCK_N, True, CAUSAL, WARP_SPEC, LAZY)

    l_safe = tl.where(l_i > 0.0, l_i, 1.0)
    out = acc / l_safe[:, None]
    if STORE_TMA:
        o_desc.store([bh, start_m, 0], tl.reshape(out.to(o_desc.dtype), (1, BLOCK_M, HEAD_D)))
    else:
        # Straight from registers: a TMA store would stage the tile in 32 KB of shared memory that, inside
        # the persistent loop, cannot reuse the K/V buffers, and 131 KB instead of 98 KB leaves one CTA per SM.
        offs_d = tl.arange(0, HEAD_D)
        o_head = o_ptr + bh.to(tl.int64) * S * HEAD_D  # 64-bit head offset: B*H*S*D may pass 2^31
        o_ptrs = o_head + offs_m[:, None] * HEAD_D + offs_d[None, :]
        tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


@triton.jit
def _descriptors(q_ptr, k_ptr, v_ptr, o_ptr, S, BH, BH_KV,
                 HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """3-D descriptors over [heads, S, D]: each load and store is bounded by its own head's S."""
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_M, HEAD_D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_M, HEAD_D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH_KV, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_N, HEAD_D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH_KV, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_N, HEAD_D])
    return q_desc, k_desc, v_desc, o_desc


@triton.autotune(configs=_configs(), key=["S", "HEAD_D", "CAUSAL"])
@triton.jit
def attention_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    sm_scale, S, H, H_KV, BH, BH_KV,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr, PIPE_QK: tl.constexpr,
    LAZY: tl.constexpr,
):
    if CAUSAL:  # noqa: SIM108 (constexpr branch)
        # Longest rows (most key blocks) first, so the short ones fill the tail of the wave.
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    q_desc, k_desc, v_desc, o_desc = _descriptors(q_ptr, k_ptr, v_ptr, o_ptr, S, BH, BH_KV, HEAD_D, BLOCK_M, BLOCK_N)
    _attn_tile(q_desc, k_desc, v_desc, o_desc, o_ptr, tl.program_id(1), pid_m, sm_scale, S, H, H_KV,
               HEAD_D, CAUSAL, BLOCK_M, BLOCK_N, WARP_SPEC, PIPE_QK, True, LAZY)


def _host_blocks(nargs: dict) -> None:
    """Autotuner pre-hook: a host descriptor's block shape must match the config being launched."""
    bm, bn, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_D"]
    nargs["q_desc"].block_shape = [1, bm, d]
    nargs["o_desc"].block_shape = [1, bm, d]
    nargs["k_desc"].block_shape = [1, bn, d]
    nargs["v_desc"].block_shape = [1, bn, d]


def _host_configs() -> list[triton.Config]:
    return [triton.Config(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages, maxnreg=c.maxnreg,
                          pre_hook=_host_blocks) for c in _configs()]


def _prune_long(configs: list[triton.Config], named_args: dict, **kwargs: object) -> list[triton.Config]:
    """At head dim 128 no 128x128 tile under the 128-register cap: it spills and ran at 0.07x of cuDNN
    (S1024-S16384, kernels-explore-h200-host3.txt), so timing it only costs the autotuner time (0.37 s a
    run at S16384). From S = 8192 on only 128-row tiles: 64x64 w4 s3, the best causal tile up to S4096
    with host descriptors, lost at S16384 causal (0.81x of cuDNN against 0.87x for 128x64 s2 r128,
    kernels-explore-h200-attention-2cta.txt), and the autotuner's one timing per config can miss that."""
    head_d = named_args.get("HEAD_D", kwargs.get("HEAD_D"))
    if head_d == 128:
        configs = [c for c in configs if not (c.kwargs["BLOCK_N"] == 128 and c.maxnreg == 128)] or configs
    if named_args["S"] < 8192:
        return configs
    return [c for c in configs if c.kwargs["BLOCK_M"] == 128] or configs


# Fixed tiles by regime, (HEAD_D, CAUSAL, longest S) -> config, for heads that do not share K/V: the
# launcher takes them instead of the autotuner, whose one timing per config picked slower tiles on these
# rows. Picked in two H200 sweeps (kernels-explore-h200-host3.txt and -pins.txt, ratio to cuDNN, the
# autotuner's pick in brackets): not causal, 128x64 s2 r128 from S2048 on (S2048 0.768 [0.741], S4096
# 0.796 and 0.814 [0.762, 0.782], S16384 0.857 and 0.849 [0.837, 0.829], S8192 tied 0.828 [0.827]) and
# 64x64 s3 at S1024 (tied, 0.756 [0.750]); causal up to S4096 64x64 s3 (S2048 0.840 [0.807], S4096
# 0.792 [0.753], D64 S4096 0.925 [0.886], S1024 tied 0.860 [0.858]). D64 without a mask keeps
# the autotuner (it tied or won there); GQA at D128 takes the one-warpgroup tile (regime_tile).
# Session 7 (kernels-explore-h200-s7.txt, every variant timed in one interleaved measurement with
# cuDNN): one warpgroup per CTA holding the whole 128-row tile, 128x64 w4 s2 with no register cap, beat
# both earlier tiles without a mask (S1024 0.761 -> 0.792, S4096 0.763 -> 0.801) and the autotuner's
# pick on the long causal row (S16384 0.798 -> 0.842); two such CTAs (128 threads, up to 255 registers,
# 96 KB each) share an SM with no CTA barrier between their warpgroups. Causal up to S4096 keeps 64x64
# s3 (S1024 0.862 against 0.799, S4096 0.840 against 0.830).
ONE_WARPGROUP_TILE = (128, 64, 4, 2, False)
REGIME_TILES: dict[tuple[int, bool], list[tuple[int, tuple]]] = {
    (128, False): [(1 << 31, ONE_WARPGROUP_TILE)],
    (128, True): [(4096, (64, 64, 4, 3, False)), (1 << 31, ONE_WARPGROUP_TILE)],
    (64, True): [(4096, (64, 64, 4, 3, False))],
}


def regime_tile(s: int, d: int, causal: bool, grouped: bool) -> tuple | None:
    """The REGIME_TILES entry (a `config` argument tuple) for this shape, or None where the autotuner picks.

    Heads that share K/V (GQA) at head dim 128 take the one-warpgroup tile at every S: it tied the
    autotuner's pick at S4096 (0.817 against 0.822 not causal, 0.863 against 0.860 causal) and beat it at
    S16384 causal (0.829 against 0.799; kernels-explore-h200-s7b.txt), with no autotuning at first call."""
    if grouped:
        return ONE_WARPGROUP_TILE if d == 128 else None
    for longest, cfg in REGIME_TILES.get((d, causal), []):
        if s <= longest:
            return cfg
    return None


def regime_config(s: int, d: int, causal: bool, grouped: bool) -> triton.Config | None:
    """regime_tile as a config for the compiled kernel; None under the interpreter (its own small tile)."""
    cfg = regime_tile(s, d, causal, grouped)
    return None if cfg is None or interpreting() else config(*cfg)


@triton.autotune(configs=_host_configs(), key=["S", "HEAD_D", "CAUSAL"],
                 prune_configs_by={"early_config_prune": _prune_long})
@triton.jit
def attention_fwd_host_kernel(
    q_desc, k_desc, v_desc, o_desc,
    sm_scale, S, H, H_KV,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr, PIPE_QK: tl.constexpr,
    LAZY: tl.constexpr,
):
    """attention_fwd_kernel with the four descriptors built on the host (kernel parameters).

    One program per tile builds its descriptors in global scratch and fences them before its first TMA
    load; at S1024-2048 a program runs only 8-32 key blocks, so that set-up is a visible share of its
    time. Host descriptors cost the programs nothing (card tma-descriptors).
    """
    if CAUSAL:  # noqa: SIM108 (constexpr branch)
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    _attn_tile(q_desc, k_desc, v_desc, o_desc, o_desc, tl.program_id(1), pid_m, sm_scale, S, H, H_KV,
               HEAD_D, CAUSAL, BLOCK_M, BLOCK_N, WARP_SPEC, PIPE_QK, True, LAZY)


@triton.autotune(configs=_configs(), key=["S", "HEAD_D", "CAUSAL"])
@triton.jit
def attention_persistent_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    sm_scale, S, H, H_KV, BH, BH_KV,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr, PIPE_QK: tl.constexpr,
    LAZY: tl.constexpr,
):
    """A fixed grid (two programs per SM) walking the (head, query block) tiles round robin.

    Descriptors are built once per program, and no CTA is launched per tile (card persistent-kernels).
    Not causal: a tile's query block varies fastest, so programs running together share one head's K/V in
    L2. Causal: the longest query blocks (most key blocks) come first across all heads, so the round robin
    hands every program a similar total; but the programs running together then read as many heads' K/V,
    which at long S no longer stays in L2 (S16384: 0.88x of cuDNN one tile per CTA, 0.77x here), and
    ordering heads in L2-sized groups unbalanced the round robin (0.58x at S1024, 0.75x at S16384;
    kernels-explore-h200-attention-grouped.txt). The launcher takes this kernel where it measured faster.
    """
    n_m = tl.cdiv(S, BLOCK_M)
    q_desc, k_desc, v_desc, o_desc = _descriptors(q_ptr, k_ptr, v_ptr, o_ptr, S, BH, BH_KV, HEAD_D, BLOCK_M, BLOCK_N)
    for tile in tl.range(tl.program_id(0), n_m * BH, tl.num_programs(0)):
        if CAUSAL:
            pid_m = n_m - 1 - tile // BH
            bh = tile % BH
        else:
            pid_m = tile % n_m
            bh = tile // n_m
        _attn_tile(q_desc, k_desc, v_desc, o_desc, o_ptr, bh, pid_m, sm_scale, S, H, H_KV,
                   HEAD_D, CAUSAL, BLOCK_M, BLOCK_N, WARP_SPEC, PIPE_QK, False, LAZY)


def use_persistent(s: int, causal: bool) -> bool:
    """Where the persistent grid measured faster on the H200: nowhere any more. It beat the one-tile
    kernel while that kernel built its descriptors on the device (not causal at every S, causal S1024;
    kernels-explore-h200-attention-persistent.txt); with host descriptors the one-tile kernel wins or
    ties it on every benchmark shape (S1024 full 0.72 -> 0.76x of cuDNN, S1024 causal 0.74 -> 0.86x,
    S8192 full 0.85 -> 0.86x, S16384 full 0.862 against 0.858; kernels-explore-h200-host*.txt).
    Kept callable (persistent=True) for the agent's retrieval and the tests."""
    return False


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              sm_scale: float | None = None, *, pinned: triton.Config | None = None,
              persistent: bool | None = None, host_desc: bool | None = None) -> torch.Tensor:
    """O = softmax(Q K^T * sm_scale [+ causal mask]) V for Q (B, H, S, D), K and V (B, H_KV, S, D).

    pinned: launch with this config instead of the autotuner's pick (the exploration sweep uses it).
    persistent: two programs per SM walk the tiles (attention_persistent_kernel) instead of one per tile;
    None takes it where it measured faster (use_persistent).
    host_desc: the one-tile kernel takes descriptors built on the host (attention_fwd_host_kernel);
    None takes them where they measured faster (use_host_descriptors).
    """
    b, h, s, d = q.shape
    h_kv = k.shape[1]
    assert k.shape == v.shape == (b, h_kv, s, d), "K and V must be (B, H_KV, S, D) with Q's S and D"
    assert h % h_kv == 0 and d in (64, 128)
    assert q.dtype == k.dtype == v.dtype and q.dtype in (torch.bfloat16, torch.float16)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(d)
    out = torch.empty_like(q)
    install_allocator(q.device)

    if pinned is not None and causal and pinned.kwargs["BLOCK_M"] % pinned.kwargs["BLOCK_N"]:
        raise ValueError("causal attention needs BLOCK_N to divide BLOCK_M (the diagonal block split assumes it)")
    if persistent is None:
        persistent = use_persistent(s, causal)
    if persistent:
        progs = 2 * num_sms(q.device)

        def pgrid(meta: dict) -> tuple[int]:
            return (min(progs, triton.cdiv(s, meta["BLOCK_M"]) * b * h),)

        if pinned is None:
            attention_persistent_kernel[pgrid](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv,
                                               HEAD_D=d, CAUSAL=causal)
        else:
            attention_persistent_kernel.fn[pgrid(pinned.kwargs)](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv,
                                                                 HEAD_D=d, CAUSAL=causal, **pinned.all_kwargs())
        return out

    def grid(meta: dict) -> tuple[int, int]:
        return (triton.cdiv(s, meta["BLOCK_M"]), b * h)

    if host_desc is None:
        host_desc = use_host_descriptors(s, causal)
    if host_desc:
        if pinned is None:
            pinned = regime_config(s, d, causal, h != h_kv)
        _attention_host(q, k, v, out, sm_scale, causal, pinned, grid)
        return out

    if pinned is None:
        attention_fwd_kernel[grid](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv, HEAD_D=d, CAUSAL=causal)
    else:
        attention_fwd_kernel.fn[grid(pinned.kwargs)](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv,
                                                     HEAD_D=d, CAUSAL=causal, **pinned.all_kwargs())
    return out


def use_host_descriptors(s: int, causal: bool) -> bool:
    """Where host-built descriptors measured faster for the one-tile kernel: every shape timed on the
    H200, same config, device -> host descriptors (kernels-explore-h200-host.txt): 64x64 w4 s3 S1024
    causal 0.65 -> 0.86x of cuDNN, S2048 causal 0.71 -> 0.83x, S4096 causal 0.72 -> 0.81x; 128x64 s2 r128
    S1024 full 0.69 -> 0.76x, S4096 full 0.71 -> 0.77x; D64 128x128 s2 r128 0.76 -> 0.89x."""
    return True


def _attention_host(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, sm_scale: float,
                    causal: bool, pinned: triton.Config | None, grid: object) -> None:
    """The one-tile kernel over host descriptors of the [B*H, S, D] views (block shapes set per config)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    b, h, s, d = q.shape
    h_kv = k.shape[1]
    bm, bn = (pinned.kwargs["BLOCK_M"], pinned.kwargs["BLOCK_N"]) if pinned is not None else (16, 16)

    def desc(t: torch.Tensor, heads: int, rows: int) -> TensorDescriptor:
        return TensorDescriptor(t, [heads, s, d], [s * d, d, 1], [1, rows, d])

    descs = (desc(q, b * h, bm), desc(k, b * h_kv, bn), desc(v, b * h_kv, bn), desc(out, b * h, bm))
    if pinned is None:
        attention_fwd_host_kernel[grid](*descs, sm_scale, s, h, h_kv, HEAD_D=d, CAUSAL=causal)
    else:
        attention_fwd_host_kernel.fn[grid(pinned.kwargs)](*descs, sm_scale, s, h, h_kv, HEAD_D=d, CAUSAL=causal,
                                                          **pinned.all_kwargs())


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """fp32 torch reference (KV heads repeated for GQA)."""
    rep = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(rep, dim=1)
    vf = v.float().repeat_interleave(rep, dim=1)
    scores = q.float() @ kf.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = q.shape[2]
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ vf).to(q.dtype)
