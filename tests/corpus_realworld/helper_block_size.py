# cause L2: the tile width comes from a local helper (`_pow2_at_least(D)`), so its value is only known by running it.
import torch
import triton
import triton.language as tl


def _pow2_at_least(n):
    return triton.next_power_of_2(n)


@triton.jit
def row_scale_kernel(x_ptr, w_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    """out[t, :] = x[t, :] * w; one program per row, one tile covers the whole row."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * D + cols, x * w, mask=mask)


def row_scale(x, w):
    n_rows, D = x.shape
    assert w.shape == (D,)
    out = torch.empty_like(x)
    row_scale_kernel[(n_rows,)](x, w, out, D, BLOCK_D=_pow2_at_least(D))
    return out


if __name__ == "__main__":
    x, w = torch.randn(3, 5), torch.randn(5)
    torch.testing.assert_close(row_scale(x, w), x * w)
    print("ok")
