import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd_block_ptr(
    Q, K, V, Out, sm_scale,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk,
    stride_oz, stride_oh, stride_om, stride_ok,
    H, N_CTX,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    Q_block_ptr = tl.make_block_ptr(
        base=Q + q_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_qm, stride_qk),
        offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0),
    )
    # K read transposed: a (HEAD_DIM, BLOCK_N) tile
    K_block_ptr = tl.make_block_ptr(
        base=K + k_offset, shape=(HEAD_DIM, N_CTX), strides=(stride_kk, stride_kn),
        offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1),
    )
    V_block_ptr = tl.make_block_ptr(
        base=V + v_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_vn, stride_vk),
        offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0),
    )
    O_block_ptr = tl.make_block_ptr(
        base=Out + o_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_om, stride_ok),
        offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0),
    )

    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/ln(2): use exp2

    q = tl.load(Q_block_ptr, boundary_check=(0,), padding_option="zero")
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K_block_ptr, boundary_check=(1,), padding_option="zero")
        qk = tl.dot(q, k)
        qk = tl.where((start_n + offs_n)[None, :] < N_CTX, qk * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_block_ptr, boundary_check=(0,), padding_option="zero")
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))

    acc = acc / l_ij[:, None]  # expect: NU005
    tl.store(O_block_ptr, acc.to(Out.type.element_ty), boundary_check=(0,))


def attention(q, k, v, sm_scale=None, out=None, BLOCK_M=64, BLOCK_N=32):
    """q, k, v: (Z, H, N_CTX, HEAD_DIM) fp16, non-causal."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    assert HEAD_DIM in (16, 32, 64, 128)
    sm_scale = sm_scale or 1.0 / math.sqrt(HEAD_DIM)
    if out is None:
        out = torch.empty_like(q)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H, 1)
    attn_fwd_block_ptr[grid](
        q, k, v, out, sm_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        H, N_CTX,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_DIM=HEAD_DIM,
        num_warps=4, num_stages=2,
    )
    return out


def reference(q, k, v, sm_scale=None):
    sm_scale = sm_scale or 1.0 / math.sqrt(q.shape[-1])
    s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    return (torch.softmax(s, -1) @ v.float()).to(q.dtype)


if __name__ == "__main__":
    # Needs a Triton with block pointers (<= 3.8); Triton 3.9 removed make_block_ptr.
    import _check as c

    def case(Z, H, N, D):
        q = c.padded(torch.randn(Z, H, N, D).half())
        k = c.padded(torch.randn(Z, N, H, D).half()).transpose(1, 2)
        v = c.padded(torch.randn(Z, H, N, D).half(), col_pad=8)
        o = c.poisoned((Z, H, N, D), torch.float16)
        attention(q, k, v, out=o)
        return c.close("o", o, reference(q, k, v), atol=2e-2, rtol=2e-2)

    c.main(case, [(1, 1, 1, 16), (1, 2, 64, 32), (2, 2, 100, 64), (1, 3, 33, 16)])
