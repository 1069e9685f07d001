# cause K23: a reduction that walks the chunks backwards (`range(NT - 1, -1, -1)`, as a reverse scan does), its pointers stepping by minus one tile per iteration, taken for a stale pointer (DF002).
import torch
import triton
import triton.language as tl


@triton.jit
def reverse_state_kernel(k_ptr, v_ptr, out_ptr, T, K: tl.constexpr, V: tl.constexpr, CHUNK: tl.constexpr):
    """out[b] = k[b]^T @ v[b], the chunks taken last to first."""
    b = tl.program_id(0).to(tl.int64)
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    state = tl.zeros([K, V], dtype=tl.float32)
    n_chunks = tl.cdiv(T, CHUNK)
    for c in range(n_chunks - 1, -1, -1):
        rows = c * CHUNK + tl.arange(0, CHUNK)
        row_ok = rows < T
        k_t = tl.load(k_ptr + (b * T + rows[None, :]) * K + o_k[:, None], mask=row_ok[None, :], other=0.0)
        v_c = tl.load(v_ptr + (b * T + rows[:, None]) * V + o_v[None, :], mask=row_ok[:, None], other=0.0)
        state += tl.dot(k_t, v_c)
    tl.store(out_ptr + (b * K + o_k[:, None]) * V + o_v[None, :], state)


def reverse_state(k, v, chunk=16):
    B, T, K = k.shape
    Bv, Tv, V = v.shape
    assert Bv == B and Tv == T
    out = torch.empty((B, K, V), dtype=torch.float32, device=k.device)
    reverse_state_kernel[(B,)](k, v, out, T, K=K, V=V, CHUNK=chunk)
    return out


if __name__ == "__main__":
    k, v = torch.randn(2, 40, 16), torch.randn(2, 40, 16)
    torch.testing.assert_close(reverse_state(k, v), k.transpose(1, 2) @ v, atol=1e-4, rtol=1e-4)
    print("ok")
