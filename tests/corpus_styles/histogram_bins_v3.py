import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    """Counts of the integer values of x (each in [0, NUM_BINS)); every program adds its block's
    histogram into the global bins atomically. Lanes past n are given the value 0 and removed
    from bin 0 again."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs)  # expect: MB001
    h = tl.histogram(x, NUM_BINS)
    padding = BLOCK - tl.sum(m.to(tl.int32), axis=0)
    h = h - tl.where(tl.arange(0, NUM_BINS) == 0, padding, 0)
    tl.atomic_add(bins_ptr + tl.arange(0, NUM_BINS), h)


def histogram(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    assert x.dtype == torch.int32 and x.is_contiguous()
    assert num_bins & (num_bins - 1) == 0, "tl.histogram needs a power-of-two bin count"
    n = x.numel()
    bins = torch.zeros((num_bins,), device=x.device, dtype=torch.int32)
    BLOCK = 1024
    histogram_kernel[(triton.cdiv(n, BLOCK),)](x, bins, n, NUM_BINS=num_bins, BLOCK=BLOCK)
    return bins
