# cause K2: `exp` of a log-decay difference and of scores minus a log-sum-exp stored by the forward pass: neither sum is a softmax normalizer.
import torch
import triton
import triton.language as tl


@triton.jit
def decayed_prefix_kernel(x_ptr, g_ptr, out_ptr, T, CHUNK: tl.constexpr):
    """out[t] = sum over s <= t in t's chunk of exp(G[t] - G[s]) * x[s], G the cumsum of the
    log decays g (g <= 0, so every factor is at most 1)."""
    c = tl.program_id(0)
    t = c * CHUNK + tl.arange(0, CHUNK)
    valid = t < T
    g = tl.load(g_ptr + t, mask=valid, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + t, mask=valid, other=0.0).to(tl.float32)
    big_g = tl.cumsum(g, 0)
    i = tl.arange(0, CHUNK)
    causal = i[:, None] >= i[None, :]
    decay = tl.where(causal, tl.exp(big_g[:, None] - big_g[None, :]), 0.0)
    tl.store(out_ptr + t, tl.sum(decay * x[None, :], axis=1), mask=valid)


@triton.jit
def row_grad_kernel(
    s_ptr, lse_ptr, dp_ptr, out_ptr, n_rows, n_cols, scale, BR: tl.constexpr, BC: tl.constexpr
):
    """out[r] = sum_c P[r, c] * dP[r, c] with P = exp(scale * S - lse) recomputed from the
    log-sum-exp the forward pass stored (the `delta` of an attention backward)."""
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    row_ok = rows < n_rows
    lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
    acc = tl.zeros([BR], tl.float32)
    for start in range(0, n_cols, BC):
        cols = start + tl.arange(0, BC)
        ok = row_ok[:, None] & (cols[None, :] < n_cols)
        offs = rows[:, None].to(tl.int64) * n_cols + cols[None, :]
        s = tl.load(s_ptr + offs, mask=ok, other=0.0)
        dp = tl.load(dp_ptr + offs, mask=ok, other=0.0)
        p = tl.exp(s * scale - lse[:, None])
        acc += tl.sum(tl.where(ok, p * dp, 0.0), axis=1)
    tl.store(out_ptr + rows, acc, mask=row_ok)


def decayed_prefix(x, g, chunk=16):
    (T,) = x.shape
    assert g.shape == x.shape
    out = torch.empty_like(x)
    decayed_prefix_kernel[(triton.cdiv(T, chunk),)](x, g, out, T, CHUNK=chunk)
    return out


def row_grad(s, lse, dp, scale, br=4, bc=32):
    n_rows, n_cols = s.shape
    assert dp.shape == s.shape and lse.shape == (n_rows,)
    s, dp = s.contiguous(), dp.contiguous()
    out = torch.empty(n_rows, dtype=torch.float32, device=s.device)
    row_grad_kernel[(triton.cdiv(n_rows, br),)](s, lse, dp, out, n_rows, n_cols, scale, BR=br, BC=bc)
    return out


if __name__ == "__main__":
    T, chunk = 37, 16
    x, g = torch.randn(T), -torch.rand(T)
    want = torch.empty(T)
    for c0 in range(0, T, chunk):
        G = torch.cumsum(g[c0 : c0 + chunk], 0)
        w = torch.tril(torch.exp(G[:, None] - G[None, :]))
        want[c0 : c0 + chunk] = w @ x[c0 : c0 + chunk]
    torch.testing.assert_close(decayed_prefix(x, g, chunk), want, atol=1e-5, rtol=1e-5)

    s, dp, scale = torch.randn(6, 70) * 8, torch.randn(6, 70), 0.125
    lse = torch.logsumexp(s * scale, -1)
    ref = (torch.softmax(s * scale, -1) * dp).sum(-1)
    torch.testing.assert_close(row_grad(s, lse, dp, scale), ref, atol=1e-5, rtol=1e-5)
    print("ok")
