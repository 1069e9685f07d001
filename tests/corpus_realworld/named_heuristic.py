# cause X1 (a crash, not a finding): a heuristic given as a named function stops the whole file instead of leaving its value unknown.
import torch
import triton
import triton.language as tl


def _block_for(args):
    return min(1024, triton.next_power_of_2(args["n_cols"]))


@triton.heuristics(values={"BLOCK": _block_for})
@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    best = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        best = tl.maximum(best, tl.max(x, axis=0))
    tl.store(out_ptr + row, best)


def row_max(x):
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    row_max_kernel[(n_rows,)](x, out, n_cols)
    return out


if __name__ == "__main__":
    x = torch.randn(4, 3000)
    torch.testing.assert_close(row_max(x), x.amax(-1))
    print("ok")
