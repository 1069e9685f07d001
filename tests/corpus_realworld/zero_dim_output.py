# cause L9: `torch.empty([])` is a 0-d tensor holding one element; the final sum is stored there.
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sums_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0))


def total(x):
    n = x.numel()
    block = 256
    n_partials = triton.cdiv(n, block)
    partial = torch.empty(n_partials, dtype=torch.float32, device=x.device)
    out = torch.empty([], dtype=torch.float32, device=x.device)
    partial_sums_kernel[(n_partials,)](x, partial, n, BLOCK=block)
    final_sum_kernel[(1,)](partial, out, n_partials, BLOCK=triton.next_power_of_2(n_partials))
    return out


if __name__ == "__main__":
    x = torch.randn(1000)
    torch.testing.assert_close(total(x), x.sum(), rtol=1e-5, atol=1e-4)
    print("ok")
