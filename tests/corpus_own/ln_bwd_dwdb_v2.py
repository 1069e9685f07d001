import sys

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 32, "ROWS_PER_PROG": 16}, num_warps=2),
        triton.Config({"BLOCK_N": 64, "ROWS_PER_PROG": 64}, num_warps=4),
        triton.Config({"BLOCK_N": 128, "ROWS_PER_PROG": 8}, num_warps=4),
    ],
    key=["M", "N"],
    reset_to_zero=["dw_ptr", "db_ptr"],
)
@triton.jit
def layernorm_dwdb_kernel(
    dy_ptr, x_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr,
    M, N,
    stride_dym, stride_xm,
    BLOCK_N: tl.constexpr, ROWS_PER_PROG: tl.constexpr,
):
    """dw[n] = sum_m dy[m, n] * xhat[m, n], db[n] = sum_m dy[m, n]; each program reduces a
    stripe of ROWS_PER_PROG rows and adds its partial sums atomically."""
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    dw_part = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_part = tl.zeros([BLOCK_N], dtype=tl.float32)
    row_start = pid_m * ROWS_PER_PROG
    row_end = tl.minimum(row_start + ROWS_PER_PROG, M)
    dy_ptrs = dy_ptr + row_start.to(tl.int64) * stride_dym + cols
    x_ptrs = x_ptr + row_start.to(tl.int64) * stride_xm + cols
    for row in tl.range(row_start, row_end):
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        dy = tl.load(dy_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        dy_ptrs += stride_dym
        x_ptrs += stride_xm
        xhat = (x - mean) * rstd
        dw_part += dy * xhat
        db_part += dy
    tl.store(dw_ptr + cols, dw_part, mask=col_mask)  # expect: GR002
    tl.atomic_add(db_ptr + cols, db_part, mask=col_mask)


def layernorm_dwdb(dy, x, mean, rstd, dw=None, db=None):
    M, N = dy.shape
    assert dy.stride(1) == 1 and x.stride(1) == 1
    if dw is None:
        dw = torch.empty((N,), dtype=torch.float32, device=dy.device)
    if db is None:
        db = torch.empty((N,), dtype=torch.float32, device=dy.device)
    dw.zero_()
    db.zero_()
    grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]), triton.cdiv(M, META["ROWS_PER_PROG"]))
    layernorm_dwdb_kernel[grid](dy, x, mean, rstd, dw, db, M, N, dy.stride(0), x.stride(0))
    return dw, db


def reference(dy, x, mean, rstd):
    xhat = (x.float() - mean[:, None]) * rstd[:, None]
    return (dy.float() * xhat).sum(0), dy.float().sum(0)


if __name__ == "__main__":
    import _check as c

    def case(M, N):
        x = c.padded(torch.randn(M, N).half(), col_pad=8)
        dy = c.padded(torch.randn(M, N).half(), col_pad=2)
        xf = x.float()
        mean = c.padded(xf.mean(1))
        rstd = c.padded(torch.rsqrt(xf.var(1, unbiased=False) + 1e-5))
        want = reference(dy, x, mean, rstd)
        problems = []
        for _ in range(2):
            dw, db = c.poisoned((N,)), c.poisoned((N,))
            layernorm_dwdb(dy, x, mean, rstd, dw, db)
            problems += c.close("dw", dw, want[0], atol=1e-3, rtol=1e-3) + c.close("db", db, want[1], atol=1e-3, rtol=1e-3)
        return problems

    c.main(case, [(1, 1), (20, 100), (130, 64), (70, 300)])
