"""A FlashAttention-style forward pass in Triton (non-causal) for the H200 run of `argus profile`.

Online softmax over key blocks with exp2; one program per (query block, batch * head).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, S,
                    stride_z, stride_s, stride_d,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1).to(tl.int64) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + off_z + offs_m[:, None] * stride_s + offs_d[None, :] * stride_d,
                mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    for start_n in range(0, S, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + off_z + cols[None, :] * stride_s + offs_d[:, None] * stride_d,
                     mask=cols[None, :] < S, other=0.0)
        qk = tl.dot(q, kt) * qk_scale
        qk = tl.where(cols[None, :] < S, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + off_z + cols[:, None] * stride_s + offs_d[None, :] * stride_d,
                    mask=cols[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + off_z + offs_m[:, None] * stride_s + offs_d[None, :] * stride_d,
             acc.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    B, H, S, D = q.shape
    q, k, v = (t.reshape(B * H, S, D) for t in (q, k, v))
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 128), B * H)
    attn_fwd_kernel[grid](q, k, v, o, D ** -0.5, S, q.stride(0), q.stride(1), q.stride(2),
                          BLOCK_M=128, BLOCK_N=64, HEAD_DIM=D, num_warps=8, num_stages=3)
    return o.reshape(B, H, S, D)


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)
