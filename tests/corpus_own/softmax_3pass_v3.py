import torch
import triton
import triton.language as tl


@triton.jit
def softmax_3pass_kernel(
    out_ptr, lse_ptr, x_ptr,
    stride_x, stride_out, n_cols,
    BLOCK: tl.constexpr,
):
    """Row softmax in three passes over the row (no online rescale): the max first, then the sum
    of exps relative to that finished max, then the probabilities; the log-sum-exp is kept too."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    offs = tl.arange(0, BLOCK)
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        lane_max = tl.maximum(lane_max, x)
    row_max = tl.max(lane_max, axis=0)
    lane_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        lane_sum += tl.exp(x)  # expect: NU003
    denom = tl.sum(lane_sum, axis=0)
    tl.store(lse_ptr + row, tl.log(denom))
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        p = tl.exp(x) / denom
        tl.store(out_row + cols, p.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_3pass(x, out=None, lse=None):
    n_rows, n_cols = x.shape
    assert x.stride(1) == 1
    if out is None:
        out = torch.empty_like(x)
    if lse is None:
        lse = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = min(256, triton.next_power_of_2(n_cols))
    softmax_3pass_kernel[(n_rows,)](out, lse, x, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out, lse


def reference(x):
    xf = x.float()
    return torch.softmax(xf, dim=-1).to(x.dtype), torch.logsumexp(xf, dim=-1)


if __name__ == "__main__":
    import _check as c

    def case(rows, cols, scale, first_block_high):
        x = torch.randn(rows, cols) * scale
        if first_block_high:
            x[:, :8] += 4 * scale  # the row max sits in the first block
        x = c.padded(x, col_pad=3)
        out = c.poisoned((rows, cols))
        lse = c.poisoned((rows,))
        softmax_3pass(x, out, lse)
        want_out, want_lse = reference(x)
        return c.close("out", out, want_out, atol=1e-5, rtol=1e-4) and c.close(
            "lse", lse, want_lse, atol=1e-4, rtol=1e-4
        )

    c.main(case, [(1, 1, 1.0, False), (3, 300, 1.0, False), (4, 700, 3.0, True), (2, 1000, 40.0, True)])
