"""A deliberately naive attention forward, O = softmax(Q K^T * scale [causal]) V, fp16, (B, H, S, D).

Fixed 64x32 tiles, no autotune, `tl.exp` (not exp2), every key block visited and masked even when it
is wholly above the causal diagonal. The starting point of `argus optimize ... --policy knowledge`;
its task is naive_attention.py.argus.toml.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    S, sm_scale,
    stride_qh, stride_qs, stride_kh, stride_ks, stride_vh, stride_vs, stride_oh, stride_os,
    HEAD_D: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_D)
    q = tl.load(q_ptr + bh * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :],
                mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)
    for start_n in range(0, S, BLOCK_N):
        offs_n = (start_n + tl.arange(0, BLOCK_N)).to(tl.int64)
        k = tl.load(k_ptr + bh * stride_kh + offs_n[:, None] * stride_ks + offs_d[None, :],
                    mask=offs_n[:, None] < S, other=0.0)
        v = tl.load(v_ptr + bh * stride_vh + offs_n[:, None] * stride_vs + offs_d[None, :],
                    mask=offs_n[:, None] < S, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        keep = offs_n[None, :] < S
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / tl.where(l_i > 0.0, l_i, 1.0)[:, None]
    tl.store(o_ptr + bh * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :],
             out.to(tl.float16), mask=offs_m[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    B, H, S, D = q.shape
    assert k.shape == v.shape == q.shape, "Q, K and V must all be (B, H, S, D)"
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 32
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    attention_kernel[grid](
        q, k, v, o, S, 1.0 / math.sqrt(D),
        q.stride(1), q.stride(2), k.stride(1), k.stride(2), v.stride(1), v.stride(2), o.stride(1), o.stride(2),
        HEAD_D=D, CAUSAL=causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )
    return o


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = q.shape[2]
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v.float()
