import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def row_cumsum_kernel(
    x_ptr, y_ptr, total_ptr,
    n_cols, stride_x, stride_y,
    BLOCK: tl.constexpr, REVERSE: tl.constexpr,
):
    """y[r, j] = sum_{i <= j} x[r, i] (or sum_{i >= j} when REVERSE), fp32 carry across chunks."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    carry = tl.zeros([1], dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        if REVERSE:
            cols = n_cols - 1 - start - tl.arange(0, BLOCK)
            valid = cols >= 0
        else:
            cols = start + tl.arange(0, BLOCK)
            valid = cols < n_cols
        x = tl.load(x_row + cols, mask=valid, other=0.0).to(tl.float32)
        carry += tl.sum(x, axis=0)  # expect: DF003
        y = tl.associative_scan(x, 0, _add) + carry  # expect: DF003
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=valid)
    tl.store(total_ptr + row + tl.arange(0, 1), carry)


def row_cumsum(x, reverse=False, out=None, total=None, BLOCK=64):
    n_rows, n_cols = x.shape
    assert x.stride(1) == 1
    if out is None:
        out = torch.empty_like(x)
    if total is None:
        total = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    row_cumsum_kernel[(n_rows,)](x, out, total, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK, REVERSE=reverse)
    return out, total


def reference(x, reverse=False):
    xf = x.float()
    y = xf.flip(1).cumsum(1).flip(1) if reverse else xf.cumsum(1)
    return y.to(x.dtype), xf.sum(1)


if __name__ == "__main__":
    import _check as c

    def case(rows, cols, reverse, dtype):
        x = c.padded(torch.randn(rows, cols).to(dtype), col_pad=5)
        out = c.poisoned((rows, cols), dtype, col_pad=1)
        total = c.poisoned((rows,))
        row_cumsum(x, reverse, out, total)
        y_ref, t_ref = reference(x, reverse)
        tol = 1e-4 if dtype == torch.float32 else 3e-2
        return c.close("y", out, y_ref, atol=tol, rtol=tol) + c.close("total", total, t_ref, atol=1e-3, rtol=1e-4)

    c.main(case, [(1, 1, False, torch.float32), (3, 100, False, torch.float32), (4, 64, True, torch.float32),
                  (2, 300, True, torch.float16), (5, 129, False, torch.float16)])
