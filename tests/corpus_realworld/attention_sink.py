# cause K22: an attention-sink logit added to the normalizer only (`l += exp(sink - m)` after the key loop, with the max guarded for rows that saw no key) taken for a score block read against a stale max (NU002, NU005).
import torch
import triton
import triton.language as tl


@triton.jit
def sink_attention_kernel(q_ptr, k_ptr, v_ptr, sink_ptr, o_ptr, T, S, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """o[h, t] = softmax over (the S keys and one sink logit) of q[h, t] . k[h, s], applied to v;
    the sink takes probability mass but contributes no value."""
    i_m, i_h = tl.program_id(0), tl.program_id(1).to(tl.int64)
    o_m = i_m * BM + tl.arange(0, BM)
    o_d = tl.arange(0, D)
    m_m = o_m < T
    q = tl.load(q_ptr + (i_h * T + o_m[:, None]) * D + o_d[None, :], mask=m_m[:, None], other=0.0)
    m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start in range(0, S, BN):
        o_n = start + tl.arange(0, BN)
        m_n = o_n < S
        k = tl.load(k_ptr + (i_h * S + o_n[None, :]) * D + o_d[:, None], mask=m_n[None, :], other=0.0)
        v = tl.load(v_ptr + (i_h * S + o_n[:, None]) * D + o_d[None, :], mask=m_n[:, None], other=0.0)
        s = tl.where(m_n[None, :], tl.dot(q, k), float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    sink = tl.load(sink_ptr + i_h).to(tl.float32)
    m_f = tl.where(m_i == float("-inf"), 0.0, m_i)
    l_i += tl.exp(sink - m_f)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + (i_h * T + o_m[:, None]) * D + o_d[None, :], acc, mask=m_m[:, None])


def sink_attention(q, k, v, sink):
    H, T, D = q.shape
    Hk, S, Dk = k.shape
    assert Hk == H and Dk == D and v.shape == k.shape and sink.shape == (H,)
    o = torch.empty_like(q)
    sink_attention_kernel[(triton.cdiv(T, 16), H)](q, k, v, sink, o, T, S, D=D, BM=16, BN=16)
    return o


if __name__ == "__main__":
    q, k, v = torch.randn(2, 20, 16), torch.randn(2, 40, 16), torch.randn(2, 40, 16)
    sink = torch.randn(2)
    scores = q @ k.transpose(1, 2)
    logits = torch.cat([scores, sink[:, None, None].expand(2, 20, 1)], dim=-1)
    probs = torch.softmax(logits, dim=-1)[..., :-1]
    torch.testing.assert_close(sink_attention(q, k, v, sink), probs @ v, atol=1e-4, rtol=1e-4)
    print("ok")
