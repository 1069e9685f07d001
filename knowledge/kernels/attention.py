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
  (card tma-descriptors).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import install_allocator, interpreting


def _configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "WARP_SPEC": False, "PIPE_QK": True}, num_warps=4, num_stages=1)]
    # WARP_SPEC (tl.range warp_specialize) stays off: on the H200 with Triton 3.6 it ran no faster at 8
    # warps and the compiler's Hopper warp-specialization pass crashed at 4 (kernels-h200-probe.txt).
    # BLOCK_N must divide BLOCK_M: the causal split into unmasked and diagonal blocks assumes it.
    return [config(*c) for c in ATTN_CONFIGS]


# (BLOCK_M, BLOCK_N, num_warps, num_stages, PIPE_QK): the autotuner's space on sm90. From the H200
# sweep (kernels-explore-h200-attention.txt): 128x128 s3 won at S1024 and S16384, 128x64 s3 at S4096
# D128, 128x64 s4 at D64; PIPE_QK lost on every shape (0.50x against 0.60x of cuDNN at S1024) and
# 128x128 s3 with it does not fit in shared memory, so it stays out of the space.
ATTN_CONFIGS = [(128, 128, 8, 3, False), (128, 64, 8, 3, False), (128, 64, 8, 4, False)]


def config(bm: int, bn: int, warps: int, stages: int, pipe: bool) -> triton.Config:
    """One attention config; the exploration sweep builds its variants through this too."""
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "WARP_SPEC": False, "PIPE_QK": pipe},
                         num_warps=warps, num_stages=stages)


@triton.jit
def _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale,
                    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Folds one block of scores qk (and its values v) into the running (acc, l_i, m_i), in base 2."""
    if MASKED:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        keep = offs_n[None, :] < S
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    # m_i starts finite (-1e30), so m_new is finite even for a fully masked block: no inf - inf.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
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
    MASKED: tl.constexpr, CAUSAL: tl.constexpr, WARP_SPEC: tl.constexpr,
):
    """Folds keys [lo, hi) into the running (acc, l_i, m_i). MASKED blocks apply the causal and length masks."""
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPEC):
        k = tl.reshape(k_desc.load([kv_row, start_n, 0]), (BLOCK_N, HEAD_D))
        qk = tl.dot(q, tl.trans(k))
        v = tl.reshape(v_desc.load([kv_row, start_n, 0]), (BLOCK_N, HEAD_D))
        acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale, BLOCK_N, MASKED, CAUSAL)
    return acc, l_i, m_i


@triton.jit
def _attn_block_pipelined(
    acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m,
    lo, hi, S, qk_scale,
    HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
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
        acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, start_n, S, qk_scale, BLOCK_N, False, False)
        qk = qk_next
    v = tl.reshape(v_desc.load([kv_row, hi - BLOCK_N, 0]), (BLOCK_N, HEAD_D))
    acc, l_i, m_i = _softmax_update(acc, l_i, m_i, qk, v, offs_m, hi - BLOCK_N, S, qk_scale, BLOCK_N, False, False)
    return acc, l_i, m_i


@triton.autotune(configs=_configs(), key=["S", "HEAD_D", "CAUSAL"])
@triton.jit
def attention_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    sm_scale, S, H, H_KV, BH, BH_KV,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr, PIPE_QK: tl.constexpr,
):
    if CAUSAL:  # noqa: SIM108 (constexpr branch)
        # Longest rows (most key blocks) first, so the short ones fill the tail of the wave.
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    batch = bh // H
    head = bh % H
    kv_row = batch * H_KV + head // (H // H_KV)

    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_M, HEAD_D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_M, HEAD_D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH_KV, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_N, HEAD_D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH_KV, S, HEAD_D], strides=[S * HEAD_D, HEAD_D, 1], block_shape=[1, BLOCK_N, HEAD_D])

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
                                                  qk_scale, HEAD_D, BLOCK_M, BLOCK_N)
    else:
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, 0, full_end, S, qk_scale,
                                    HEAD_D, BLOCK_M, BLOCK_N, False, CAUSAL, WARP_SPEC)
    acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, full_end, stop, S, qk_scale,
                                HEAD_D, BLOCK_M, BLOCK_N, True, CAUSAL, WARP_SPEC)

    l_safe = tl.where(l_i > 0.0, l_i, 1.0)
    out = acc / l_safe[:, None]
    o_desc.store([bh, start_m, 0], tl.reshape(out.to(o_ptr.dtype.element_ty), (1, BLOCK_M, HEAD_D)))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              sm_scale: float | None = None, *, pinned: triton.Config | None = None) -> torch.Tensor:
    """O = softmax(Q K^T * sm_scale [+ causal mask]) V for Q (B, H, S, D), K and V (B, H_KV, S, D).

    pinned: launch with this config instead of the autotuner's pick (the exploration sweep uses it).
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

    def grid(meta: dict) -> tuple[int, int]:
        return (triton.cdiv(s, meta["BLOCK_M"]), b * h)

    if pinned is None:
        attention_fwd_kernel[grid](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv, HEAD_D=d, CAUSAL=causal)
    else:
        attention_fwd_kernel.fn[grid(pinned.kwargs)](q, k, v, out, sm_scale, s, h, h_kv, b * h, b * h_kv,
                                                     HEAD_D=d, CAUSAL=causal, **pinned.all_kwargs())
    return out


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
