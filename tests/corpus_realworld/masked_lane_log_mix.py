# cause K3: NaN made only in masked-off lanes (`other=-inf`, then -inf - -inf), and a stand-in mixing weight the launcher takes from its caller: neither reaches a stored lane.
import torch
import triton
import triton.language as tl


@triton.jit
def log_mix_kernel(
    p_ptr, p_stride, q_ptr, q_stride, out_ptr, out_stride, n_cols, W: tl.constexpr, BLOCK: tl.constexpr
):
    """out = log(W * exp(p) + (1 - W) * exp(q)) for log-probabilities p and q, 0 < W < 1,
    computed relative to the lane's larger input so that neither exp overflows."""
    row = tl.program_id(0).to(tl.int64)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < n_cols
        p = tl.load(p_ptr + row * p_stride + cols, mask=ok, other=float("-inf"))
        q = tl.load(q_ptr + row * q_stride + cols, mask=ok, other=float("-inf"))
        hi = tl.maximum(p, q)
        mixed = hi + tl.log(W * tl.exp(p - hi) + (1.0 - W) * tl.exp(q - hi))
        tl.store(out_ptr + row * out_stride + cols, mixed, mask=ok)


def log_mix(p, q, w):
    assert p.shape == q.shape and p.is_contiguous() and q.is_contiguous()
    n_rows, n_cols = p.shape
    out = torch.empty_like(p)
    log_mix_kernel[(n_rows,)](p, p.stride(0), q, q.stride(0), out, out.stride(0), n_cols, W=w, BLOCK=32)
    return out


if __name__ == "__main__":
    p, q = torch.log_softmax(torch.randn(3, 50), -1), torch.log_softmax(torch.randn(3, 50) * 3, -1)
    want = torch.log(0.3 * p.exp() + 0.7 * q.exp())
    torch.testing.assert_close(log_mix(p, q, 0.3), want)
    print("ok")
