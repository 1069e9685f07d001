# cause K21b: a chunked scan whose state for each chunk is summed in an inner loop over sub-chunks, the state entering each chunk stored in the outer loop before that inner loop (an exclusive prefix, by design), taken for a reduction that skips its last chunk (DF003).
import torch
import triton
import triton.language as tl


@triton.jit
def nested_states_kernel(
    k_ptr,
    v_ptr,
    states_ptr,
    final_ptr,
    T,
    K: tl.constexpr,
    V: tl.constexpr,
    CHUNK: tl.constexpr,
    SUB: tl.constexpr,
):
    """states[b, c] = k[b, :c*CHUNK]^T @ v[b, :c*CHUNK]; final[b] = the same over all of T.
    Each chunk's part is summed over sub-chunks of SUB rows."""
    b = tl.program_id(0).to(tl.int64)
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    state = tl.zeros([K, V], dtype=tl.float32)
    n_chunks = tl.cdiv(T, CHUNK)
    for c in range(n_chunks):
        tl.store(states_ptr + ((b * n_chunks + c) * K + o_k[:, None]) * V + o_v[None, :], state)
        part = tl.zeros([K, V], dtype=tl.float32)
        for s in range(tl.cdiv(min(CHUNK, T - c * CHUNK), SUB)):
            rows = c * CHUNK + s * SUB + tl.arange(0, SUB)
            row_ok = rows < T
            k_t = tl.load(k_ptr + (b * T + rows[None, :]) * K + o_k[:, None], mask=row_ok[None, :], other=0.0)
            v_c = tl.load(v_ptr + (b * T + rows[:, None]) * V + o_v[None, :], mask=row_ok[:, None], other=0.0)
            part = tl.dot(k_t, v_c, part)
        state += part
    tl.store(final_ptr + (b * K + o_k[:, None]) * V + o_v[None, :], state)


def nested_states(k, v, chunk=32, sub=16):
    B, T, K = k.shape
    Bv, Tv, V = v.shape
    assert Bv == B and Tv == T
    n_chunks = triton.cdiv(T, chunk)
    states = torch.empty((B, n_chunks, K, V), dtype=torch.float32, device=k.device)
    final = torch.empty((B, K, V), dtype=torch.float32, device=k.device)
    nested_states_kernel[(B,)](k, v, states, final, T, K=K, V=V, CHUNK=chunk, SUB=sub)
    return states, final


if __name__ == "__main__":
    k, v = torch.randn(2, 72, 16), torch.randn(2, 72, 16)
    states, final = nested_states(k, v)
    prefix = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), dim=1)
    expected = torch.cat([torch.zeros(2, 1, 16, 16), prefix[:, 31:64:32]], dim=1)
    torch.testing.assert_close(states, expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(final, prefix[:, -1], atol=1e-4, rtol=1e-4)
    print("ok")
