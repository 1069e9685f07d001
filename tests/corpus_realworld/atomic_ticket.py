# cause K11: `slot = tl.atomic_add(counter, 1)` gives each program its own output row (a ticket); the rows are not raced for and not left unwritten.
import torch
import triton
import triton.language as tl


@triton.jit
def keep_positive_rows_kernel(x_ptr, x_stride, out_ptr, out_stride, count_ptr, n_cols, BLOCK: tl.constexpr):
    """Copy every row whose sum is positive to the next free row of `out` (any order)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=ok, other=0.0)
    if tl.sum(x, axis=0) > 0:
        slot = tl.atomic_add(count_ptr, 1).to(tl.int64)
        tl.store(out_ptr + slot * out_stride + cols, x, mask=ok)


def keep_positive_rows(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    keep_positive_rows_kernel[(n_rows,)](
        x, x.stride(0), out, out.stride(0), count, n_cols, BLOCK=triton.next_power_of_2(n_cols)
    )
    return out[: int(count.item())]


if __name__ == "__main__":
    x = torch.randn(23, 40)
    got = keep_positive_rows(x)
    want = x[x.sum(-1) > 0]
    torch.testing.assert_close(got[got[:, 0].argsort()], want[want[:, 0].argsort()])
    print("ok")
