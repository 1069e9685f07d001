import sys

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # a global a kernel reads must be a tl.constexpr object
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def log_softmax_kernel(
    in_ptr, out_ptr,
    in_row_stride, out_row_stride, n_cols,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    in_row = in_ptr + row * in_row_stride  # expect: MB003
    out_row = out_ptr + row.to(tl.int64) * out_row_stride
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    # exp(s) == exp2(s * log2(e)); log(z) == log2(z) * ln(2)
    denom = tl.sum(tl.exp2(shifted * LOG2E), axis=0)
    out = shifted - tl.log2(denom) * LN2
    tl.store(out_row + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


def log_softmax(x: torch.Tensor, out: torch.Tensor = None):
    n_rows, n_cols = x.shape
    assert x.stride(1) == 1
    if out is None:
        out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK <= 2048 else 8
    log_softmax_kernel[(n_rows,)](
        x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK, num_warps=num_warps,
    )
    return out


def reference(x):
    return torch.log_softmax(x.float(), dim=-1).to(x.dtype)


if __name__ == "__main__":
    import _check as c

    def case(rows, cols, scale, huge):
        if huge:
            # rows 2**30 elements apart: row * stride passes 2**31 from the third row on
            x = c.sparse_view((rows, cols), (1 << 30, 1), torch.float16)
        else:
            x = c.padded((torch.randn(rows, cols) * scale).half(), col_pad=6)
        out = c.poisoned((rows, cols), torch.float16)
        log_softmax(x, out)
        return c.close("out", out, reference(x), atol=2e-2, rtol=1e-2)

    c.main(case, [(1, 1, 1.0, False), (7, 33, 1.0, False), (4, 512, 3.0, False), (3, 200, 80.0, False), (3, 16, 1.0, True)])
