# cause K19: a chunk-local score matrix A[t, i] (its last axis is the BT positions of the chunk) computed from a tile whose tensor the launcher never unpacks (its rows carry no coordinates), taken for a transposed store (DF004).
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_local_scores_kernel(do_ptr, v_ptr, a_ptr, T, V: tl.constexpr, BT: tl.constexpr, BV: tl.constexpr):
    """a[t, i] = sum_v do[t, v] * v[c * BT + i, v] for i <= t - c * BT (c: t's chunk), else 0."""
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_i = tl.arange(0, BT)
    m_t = o_t < T
    b_a = tl.zeros([BT, BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        m_v = o_v < V
        b_do = tl.load(do_ptr + o_t[:, None] * V + o_v[None, :], mask=m_t[:, None] & m_v[None, :], other=0.0)
        b_v = tl.load(v_ptr + o_v[:, None] + o_t[None, :] * V, mask=m_v[:, None] & m_t[None, :], other=0.0)
        b_a = tl.dot(b_do, b_v, b_a)
    b_a = tl.where(o_i[:, None] >= o_i[None, :], b_a, 0.0)
    tl.store(a_ptr + o_t[:, None] * BT + o_i[None, :], b_a, mask=m_t[:, None])


def chunk_local_scores(do, v, chunk=16):
    # `do` has v's shape by the caller's contract; only v is unpacked here
    T, V = v.shape
    a = torch.empty((T, chunk), dtype=torch.float32, device=v.device)
    chunk_local_scores_kernel[(triton.cdiv(T, chunk),)](do, v, a, T, V=V, BT=chunk, BV=16)
    return a


def _reference(do, v, chunk):
    T = v.shape[0]
    out = torch.zeros(T, chunk)
    for t in range(T):
        c = t // chunk
        for i in range(t - c * chunk + 1):
            out[t, i] = do[t] @ v[c * chunk + i]
    return out


if __name__ == "__main__":
    do, v = torch.randn(40, 24), torch.randn(40, 24)
    torch.testing.assert_close(chunk_local_scores(do, v), _reference(do, v, 16), atol=1e-4, rtol=1e-4)
    print("ok")
