# cause K24: a dot that contracts all of K in one tile, repeated at every step of a loop over something else (the terms of a series, the steps of an iterative solver, the chunks of a scan) and summed, taken for a double-counted reduction over K (DF003).
import torch
import triton
import triton.language as tl


@triton.jit
def power_series_kernel(x_ptr, w_ptr, out_ptr, M, K: tl.constexpr, BM: tl.constexpr, N_TERMS: tl.constexpr):
    """out[m, :] = sum over i = 1..N_TERMS of x[m, :] @ w^i: each term is a whole contraction
    over K, and the loop sums the terms."""
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    o_k = tl.arange(0, K)
    row_ok = rows < M
    w = tl.load(w_ptr + o_k[:, None] * K + o_k[None, :])
    term = tl.load(x_ptr + rows[:, None] * K + o_k[None, :], mask=row_ok[:, None], other=0.0)
    acc = tl.zeros([BM, K], dtype=tl.float32)
    for _ in range(N_TERMS):
        term = tl.dot(term, w)
        acc += term
    tl.store(out_ptr + rows[:, None] * K + o_k[None, :], acc, mask=row_ok[:, None])


def power_series(x, w, n_terms=3):
    M, K = x.shape
    assert w.shape == (K, K)
    out = torch.empty((M, K), dtype=torch.float32, device=x.device)
    power_series_kernel[(triton.cdiv(M, 16),)](x, w, out, M, K=K, BM=16, N_TERMS=n_terms)
    return out


if __name__ == "__main__":
    x, w = torch.randn(40, 16), torch.randn(16, 16) / 4
    expected = x @ w + x @ w @ w + x @ w @ w @ w
    torch.testing.assert_close(power_series(x, w), expected, atol=1e-4, rtol=1e-4)
    print("ok")
