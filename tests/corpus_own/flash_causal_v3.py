import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                start_m, qk_scale, lo, hi, N_CTX,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                ON_DIAGONAL: tl.constexpr):
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_ok = offs_n < N_CTX
        k = tl.load(k_base + offs_n[None, :].to(tl.int64) * stride_kn + offs_d[:, None],
                    mask=kv_ok[None, :], other=0.0)
        qk = tl.dot(q, k)
        if ON_DIAGONAL:
            causal = (offs_m[:, None] >= offs_n[None, :]) & kv_ok[None, :]
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)  # also: DF003
        acc = acc * alpha[:, None]
        v = tl.load(v_base + offs_n[:, None].to(tl.int64) * stride_vn + offs_d[None, :],
                    mask=kv_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def causal_attn_fwd(
    Q, K, V, Out, sm_scale,
    stride_qb, stride_qh, stride_qm,
    stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn,
    stride_ob, stride_oh, stride_om,
    H, N_CTX,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = off_bh // H
    off_h = off_bh % H
    q_base = Q + off_b.to(tl.int64) * stride_qb + off_h.to(tl.int64) * stride_qh
    k_base = K + off_b.to(tl.int64) * stride_kb + off_h.to(tl.int64) * stride_kh
    v_base = V + off_b.to(tl.int64) * stride_vb + off_h.to(tl.int64) * stride_vh
    o_base = Out + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ok = offs_m < N_CTX
    q = tl.load(q_base + offs_m[:, None].to(tl.int64) * stride_qm + offs_d[None, :], mask=q_ok[:, None], other=0.0)

    qk_scale = sm_scale * 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # stage 1: key blocks strictly left of the diagonal, no causal mask needed
    acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                start_m, qk_scale, 0, (start_m + 1) * BLOCK_M, N_CTX,  # expect: DF003
                                BLOCK_M, BLOCK_N, HEAD_DIM, False)
    # stage 2: the diagonal block(s); keys past the query block are skipped entirely
    acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                start_m, qk_scale, start_m * BLOCK_M, (start_m + 1) * BLOCK_M, N_CTX,
                                BLOCK_M, BLOCK_N, HEAD_DIM, True)
    acc = acc / l_i[:, None]
    o_ptrs = o_base + offs_m[:, None].to(tl.int64) * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.type.element_ty), mask=q_ok[:, None])


def causal_attention(q, k, v, sm_scale=None, out=None, BLOCK_M=32, BLOCK_N=16):
    """q, k, v: (B, H, N_CTX, D) fp16 with unit stride along D."""
    B, H, N_CTX, D = q.shape
    assert q.stride(3) == 1 and k.stride(3) == 1 and v.stride(3) == 1
    sm_scale = sm_scale or 1.0 / math.sqrt(D)
    if out is None:
        out = torch.empty_like(q)
    grid = (triton.cdiv(N_CTX, BLOCK_M), B * H, 1)
    causal_attn_fwd[grid](
        q, k, v, out, sm_scale,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        H, N_CTX,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_DIM=D,
    )
    return out


def reference(q, k, v, sm_scale=None):
    sm_scale = sm_scale or 1.0 / math.sqrt(q.shape[-1])
    s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    n = q.shape[2]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v.float()).half()


if __name__ == "__main__":
    import _check as c

    def case(B, H, N, D, scale, sm_scale):
        q = c.padded(torch.randn(B, N, H, D).half() * scale).transpose(1, 2)
        k = c.padded(torch.randn(B, N, H, D).half() * scale).transpose(1, 2)
        v = c.padded(torch.randn(B, H, N, D).half(), col_pad=8)
        o = c.poisoned((B, H, N, D), torch.float16)
        causal_attention(q, k, v, sm_scale, o)
        return c.close("o", o, reference(q, k, v, sm_scale), atol=2e-2, rtol=2e-2)

    c.main(case, [(1, 1, 1, 16, 1.0, None), (1, 2, 40, 32, 1.0, None), (2, 1, 64, 16, 2.0, None),
                  (1, 1, 77, 64, 3.0, 1.0)])
