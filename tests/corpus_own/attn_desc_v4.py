import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd_desc(
    q_ptr, k_ptr, v_ptr, o_ptr,
    qk_scale, BH, SEQ,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    """Attention over contiguous (B*H, SEQ, HEAD_DIM) tensors through device-side tensor
    descriptors: rows past SEQ read as zeros and are not written, so keys there are masked."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, SEQ, HEAD_DIM], strides=[SEQ * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH, SEQ, HEAD_DIM], strides=[SEQ * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH, SEQ, HEAD_DIM], strides=[SEQ * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, SEQ, HEAD_DIM], strides=[SEQ * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])

    row0 = pid_m * BLOCK_M
    rows = row0 + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh, row0, 0]).reshape(BLOCK_M, HEAD_DIM)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum(SEQ, row0 + BLOCK_M) if CAUSAL else SEQ
    for start in range(0, hi, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        k = k_desc.load([bh, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        s = tl.dot(q, k.T) * qk_scale
        keep = cols[None, :] < start + BLOCK_N  # expect: DF003
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, float("-inf"))  # expect: DF003
        m_new = tl.maximum(m_i, tl.max(s, 1))  # expect: DF003
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)  # expect: DF003
        v = v_desc.load([bh, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)  # expect: DF003
        m_i = m_new

    out = acc / l_i[:, None]
    o_desc.store([bh, row0, 0], out.to(o_ptr.dtype.element_ty).reshape(1, BLOCK_M, HEAD_DIM))


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def attention(q, k, v, causal=False, out=None, BLOCK_M=32, BLOCK_N=16):
    """q, k, v: (B, H, SEQ, HEAD_DIM), contiguous; HEAD_DIM a power of two."""
    B, H, SEQ, HEAD_DIM = q.shape
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    assert k.shape == q.shape and v.shape == q.shape
    if out is None:
        out = torch.empty_like(q)
    if q.is_cuda:
        triton.set_allocator(_alloc)
    grid = (triton.cdiv(SEQ, BLOCK_M), B * H)
    attn_fwd_desc[grid](
        q, k, v, out, 1.4426950408889634 / math.sqrt(HEAD_DIM), B * H, SEQ,
        HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
    )
    return out


def reference(q, k, v, causal=False):
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v.float()).to(q.dtype)


if __name__ == "__main__":
    import _check as c

    def case(B, H, SEQ, D, causal):
        q = torch.randn(B, H, SEQ, D).half().to(c.DEV)
        k = torch.randn(B, H, SEQ, D).half().to(c.DEV)
        v = torch.randn(B, H, SEQ, D).half().to(c.DEV)
        o = torch.full((B, H, SEQ, D), float("nan"), dtype=torch.float16, device=c.DEV)
        attention(q, k, v, causal=causal, out=o)
        return c.close("o", o.cpu(), reference(q.cpu(), k.cpu(), v.cpu(), causal), atol=2e-2, rtol=2e-2)

    c.main(case, [(1, 1, 1, 16, False), (1, 2, 40, 32, False), (2, 1, 33, 16, True), (1, 3, 64, 16, True)])
