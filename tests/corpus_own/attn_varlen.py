import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def varlen_fwd(Q, K, V, O, cu_seqlens, sm_scale,
               stride_qt, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh, stride_ot, stride_oh,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Packed variable-length attention: sequence `seq` owns rows cu_seqlens[seq] ..
    cu_seqlens[seq + 1] - 1 of q, k, v and o, (T, H, D); programs past a sequence's end exit."""
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    seq = tl.program_id(2)
    seq_start = tl.load(cu_seqlens + seq)
    seq_end = tl.load(cu_seqlens + seq + 1)
    seqlen = seq_end - seq_start
    if start_m * BLOCK_M >= seqlen:
        return
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + (seq_start + offs_m)[:, None].to(tl.int64) * stride_qt + off_h.to(tl.int64) * stride_qh + offs_d[None, :],
                mask=offs_m[:, None] < seqlen, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seqlen, BLOCK_N):
        cols = start_n + offs_n
        kv_rows = (seq_start + cols)[:, None].to(tl.int64)
        k = tl.load(K + kv_rows * stride_kt + off_h.to(tl.int64) * stride_kh + offs_d[None, :], mask=cols[:, None] < seqlen, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        qk = tl.where(cols[None, :] < seqlen, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + kv_rows * stride_vt + off_h.to(tl.int64) * stride_vh + offs_d[None, :], mask=cols[:, None] < seqlen, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(O + (seq_start + offs_m)[:, None].to(tl.int64) * stride_ot + off_h.to(tl.int64) * stride_oh + offs_d[None, :],
             acc.to(O.dtype.element_ty), mask=offs_m[:, None] < seqlen)


def varlen_attention(q, k, v, cu_seqlens, max_seqlen, o=None):
    """q, k, v: (T, H, D) packed; cu_seqlens: (B + 1,) int32 prefix sums of the lengths."""
    T, H, D = q.shape
    if o is None:
        o = torch.empty_like(q)
    B = cu_seqlens.numel() - 1
    BLOCK_M, BLOCK_N = 32, 32
    grid = (triton.cdiv(max_seqlen, BLOCK_M), H, B)
    varlen_fwd[grid](q, k, v, o, cu_seqlens, 1.0 / math.sqrt(D),
                     q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
                     o.stride(0), o.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_DIM=D)
    return o


def reference(q, k, v, cu_seqlens):
    out = torch.zeros(q.shape)
    for b in range(cu_seqlens.numel() - 1):
        lo, hi = int(cu_seqlens[b]), int(cu_seqlens[b + 1])
        if hi == lo:
            continue
        qs, ks, vs = (x[lo:hi].float().transpose(0, 1) for x in (q, k, v))
        s = qs @ ks.transpose(-1, -2) / math.sqrt(q.shape[-1])
        out[lo:hi] = (torch.softmax(s, -1) @ vs).transpose(0, 1)
    return out.to(q.dtype)


if __name__ == "__main__":
    import _check as c

    def case(lengths, H, D):
        lengths = torch.tensor(lengths, dtype=torch.int32)
        cu = torch.zeros(len(lengths) + 1, dtype=torch.int32)
        cu[1:] = torch.cumsum(lengths, 0)
        T = int(cu[-1])
        q = c.padded(torch.randn(T, H, D).half())
        k = c.padded(torch.randn(T, H, D).half())
        v = c.padded(torch.randn(T, H, D).half(), col_pad=8)
        o = c.poisoned((T, H, D), torch.float16)
        varlen_attention(q, k, v, c.padded(cu), int(lengths.max()), o=o)
        return c.close("o", o, reference(q, k, v, cu), atol=2e-2, rtol=2e-2)

    c.main(case, [((1,), 1, 16), ((5, 0, 40), 2, 32), ((33, 1, 2), 3, 16), ((64,), 1, 64)])
