import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def gqa_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    seqlen_q, seqlen_k, softmax_scale,
    stride_qb, stride_qs, stride_qh,
    stride_kb, stride_ks, stride_kh,
    stride_vb, stride_vs, stride_vh,
    stride_ob, stride_os, stride_oh,
    NUM_HEADS: tl.constexpr, NUM_KV_HEADS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """Grouped-query attention, (batch, seq, heads, dim) layout, no mask."""
    pid_m = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    GROUP: tl.constexpr = NUM_HEADS // NUM_KV_HEADS
    kv_head = head // GROUP

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)

    q_ptrs = (q_ptr + batch.to(tl.int64) * stride_qb + head.to(tl.int64) * stride_qh
              + offs_m[:, None].to(tl.int64) * stride_qs + offs_d[None, :])
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seqlen_q, other=0.0)
    k_base = k_ptr + batch.to(tl.int64) * stride_kb + kv_head.to(tl.int64) * stride_kh
    v_base = v_ptr + batch.to(tl.int64) * stride_vb + kv_head.to(tl.int64) * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    for start_n in tl.range(0, seqlen_k, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < seqlen_k
        k = tl.load(k_base + cols[:, None].to(tl.int64) * stride_ks + offs_d[None, :], mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * softmax_scale
        s = tl.where(col_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = alpha * l_i + tl.sum(p, axis=1)
        v = tl.load(v_base + offs_n[:, None].to(tl.int64) * stride_vs + offs_d[None, :], mask=col_ok[:, None], other=0.0)  # expect: DF001  # also: DF002
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # expect: DF001
        m_i = m_new

    o = acc / l_i[:, None]
    o_ptrs = (o_ptr + batch.to(tl.int64) * stride_ob + head.to(tl.int64) * stride_oh
              + offs_m[:, None].to(tl.int64) * stride_os + offs_d[None, :])
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < seqlen_q)


def gqa_attention(q, k, v, out=None, BLOCK_M=16, BLOCK_N=32):
    """q: (B, Sq, H, D); k, v: (B, Sk, H_KV, D); H a multiple of H_KV; D a power of two."""
    B, Sq, H, D = q.shape
    _, Sk, H_KV, _ = k.shape
    assert H % H_KV == 0 and v.shape == k.shape
    assert q.stride(-1) == 1 and k.stride(-1) == 1 and v.stride(-1) == 1
    if out is None:
        out = torch.empty_like(q)
    grid = (triton.cdiv(Sq, BLOCK_M), H, B)
    gqa_fwd_kernel[grid](
        q, k, v, out, Sq, Sk, 1.0 / math.sqrt(D),
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        NUM_HEADS=H, NUM_KV_HEADS=H_KV,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=D,
    )
    return out


def reference(q, k, v):
    H, H_KV = q.shape[2], k.shape[2]
    kr = k.float().repeat_interleave(H // H_KV, dim=2)
    vr = v.float().repeat_interleave(H // H_KV, dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), kr) / math.sqrt(q.shape[-1])
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, -1), vr).to(q.dtype)


if __name__ == "__main__":
    import _check as c

    def case(B, Sq, Sk, H, H_KV, D):
        q = c.padded(torch.randn(B, Sq, H, D).half(), col_pad=8)
        kv = c.padded(torch.randn(B, Sk, 2, H_KV, D).half())
        k, v = kv[:, :, 0], kv[:, :, 1]
        o = c.poisoned((B, Sq, H, D), torch.float16)
        gqa_attention(q, k, v, o)
        return c.close("o", o, reference(q, k, v), atol=2e-2, rtol=2e-2)

    c.main(case, [(1, 1, 1, 1, 1, 16), (2, 20, 45, 4, 2, 32), (1, 33, 64, 8, 2, 16), (1, 16, 70, 6, 1, 64)])
