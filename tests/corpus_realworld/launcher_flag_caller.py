# cause L6: the caller fixes the flag: the unmasked launch sits in a helper called only under `if even:`.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_cols_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    n_rows,
    n_cols,
    stride_x,
    stride_o,
    BLOCK_R: tl.constexpr,
    BLOCK_C: tl.constexpr,
    EVEN: tl.constexpr,
):
    """out[r, c] = x[r, c] * w[c] over (n_rows, n_cols); one program per tile of rows."""
    pid = tl.program_id(0)
    rows = (pid * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)
    cols = tl.arange(0, BLOCK_C)
    x_off = rows[:, None] * stride_x + cols[None, :]
    o_off = rows[:, None] * stride_o + cols[None, :]
    if EVEN:
        w = tl.load(w_ptr + cols)
        x = tl.load(x_ptr + x_off)
        tl.store(out_ptr + o_off, x * w[None, :])
    else:
        m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
        x = tl.load(x_ptr + x_off, mask=m, other=0.0)
        tl.store(out_ptr + o_off, x * w[None, :], mask=m)


def _launch_even(x, w, out, block_r, block_c):
    """Only for whole tiles: the caller checked that block_r divides the rows and block_c == cols."""
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_rows, block_r),)  # whole tiles: the same as n_rows // block_r here
    scale_cols_kernel[grid](
        x, w, out, n_rows, n_cols, x.stride(0), out.stride(0), BLOCK_R=block_r, BLOCK_C=block_c, EVEN=True
    )


def _launch_masked(x, w, out, block_r, block_c):
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_rows, block_r),)
    scale_cols_kernel[grid](
        x, w, out, n_rows, n_cols, x.stride(0), out.stride(0), BLOCK_R=block_r, BLOCK_C=block_c, EVEN=False
    )


def scale_cols(x, w, block_r=8):
    n_rows, n_cols = x.shape
    assert w.shape == (n_cols,)
    block_c = triton.next_power_of_2(n_cols)
    out = torch.empty_like(x)
    even = n_rows % block_r == 0 and block_c == n_cols
    if even:
        _launch_even(x, w, out, block_r, block_c)
    else:
        _launch_masked(x, w, out, block_r, block_c)
    return out


if __name__ == "__main__":
    for rows, cols in ((32, 16), (30, 16), (32, 12), (5, 7)):
        x = torch.randn(rows, cols)
        w = torch.randn(cols)
        torch.testing.assert_close(scale_cols(x, w), x * w[None, :])
    print("ok")
