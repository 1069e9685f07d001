import torch
import triton
import triton.language as tl


@triton.jit
def rowscale_fwd_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    """y[r, :] = x[r, :] * w[r]."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    w = tl.load(w_ptr + row)
    x = tl.load(x_ptr + row * stride_x + cols, mask=m, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * w, mask=m)  # expect: GR001


@triton.jit
def rowscale_bwd_kernel(x_ptr, w_ptr, dy_ptr, dx_ptr, dw_ptr, n_cols, stride_x, stride_dy, stride_dx,
                        BLOCK: tl.constexpr):
    """dx = dy * w[r]; dw[r] = sum(dy * x) over the row."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    w = tl.load(w_ptr + row)
    x = tl.load(x_ptr + row * stride_x + cols, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride_dy + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(dx_ptr + row * stride_dx + cols, dy * w, mask=m)
    tl.store(dw_ptr + row, tl.sum(dy * x, axis=0))


class RowScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        n_rows, n_cols = x.shape
        assert w.shape == (n_rows,)
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(n_cols)
        rowscale_fwd_kernel[(n_rows - 1,)](x, w, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK)
        ctx.save_for_backward(x, w)
        ctx.BLOCK = BLOCK
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        n_rows, n_cols = x.shape
        dy = dy.contiguous()
        dx = torch.empty_like(x)
        dw = torch.empty_like(w)
        rowscale_bwd_kernel[(n_rows,)](x, w, dy, dx, dw, n_cols, x.stride(0), dy.stride(0), dx.stride(0),
                                       BLOCK=ctx.BLOCK)
        return dx, dw


def rowscale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return RowScale.apply(x, w)
