# cause L3: `dy.view(-1, n)` and `y.view(-1, n)` have the same rows, and nothing but the views says so.
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_bwd_kernel(dy_ptr, dy_stride, y_ptr, y_stride, dx_ptr, dx_stride, n_cols, BLOCK: tl.constexpr):
    """dx = y * (dy - sum(dy * y)) for one row that fits one tile."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * dy_stride + cols, mask=mask, other=0.0)
    y = tl.load(y_ptr + row * y_stride + cols, mask=mask, other=0.0)
    inner = tl.sum(dy * y, axis=0)
    tl.store(dx_ptr + row * dx_stride + cols, y * (dy - inner), mask=mask)


def softmax_backward(dy, y):
    *lead, n_cols = dy.shape
    dy2 = dy.contiguous().view(-1, n_cols)
    y2 = y.contiguous().view(-1, n_cols)
    n_rows = dy2.shape[0]
    dx2 = torch.empty_like(dy2)
    block = triton.next_power_of_2(n_cols)
    softmax_bwd_kernel[(n_rows,)](
        dy2, dy2.stride(0), y2, y2.stride(0), dx2, dx2.stride(0), n_cols, BLOCK=block
    )
    return dx2.view(*lead, n_cols)


if __name__ == "__main__":
    x = torch.randn(2, 3, 10, requires_grad=True)
    y = torch.softmax(x, -1)
    dy = torch.randn_like(y)
    (want,) = torch.autograd.grad(y, x, dy)
    torch.testing.assert_close(softmax_backward(dy, y.detach()), want)
    print("ok")
