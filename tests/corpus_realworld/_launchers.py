"""Launchers of the kernels that, as in the packages they imitate, are launched from another module.

Used by the kernels' own `__main__` self-checks (run under TRITON_INTERPRET=1 by the tests).
"""

import torch
from count_buffer_dtype import label_counts_kernel
from masked_lane_nan import mixture_div_kernel
from no_launch_site import tile_prefix_sum_kernel


def mixture_div(x, y, beta=0.5):
    n_rows, n_cols = x.shape
    assert y.shape == x.shape
    loss = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
    mixture_div_kernel[(n_rows,)](
        x, x.stride(0), y, y.stride(0), loss, loss.stride(0), n_cols, beta=beta, BLOCK=32
    )
    return loss


def check_mixture_div():
    x, y = torch.log_softmax(torch.randn(2, 45), -1), torch.log_softmax(torch.randn(2, 45), -1)
    log_m = torch.log(0.5 * y.exp() + 0.5 * x.exp())
    want = 0.5 * y.exp() * (y - log_m) + 0.5 * x.exp() * (x - log_m)
    torch.testing.assert_close(mixture_div(x, y), want)


def tile_prefix_sum(counts, block=8):
    n_experts, n_tiles = counts.shape
    assert counts.is_contiguous()
    tile_prefix_sum_kernel[(n_experts,)](counts, n_tiles, BLOCK=block)
    return counts


def check_tile_prefix_sum():
    counts = torch.randint(0, 5, (3, 21), dtype=torch.int32)
    want = (torch.cumsum(counts, 1) - counts).to(torch.int32)
    torch.testing.assert_close(tile_prefix_sum(counts), want)


def label_counts(labels, n_classes, block=16):
    counts = torch.empty(n_classes, dtype=torch.int32, device=labels.device)
    label_counts_kernel[(n_classes,)](labels, counts, labels.numel(), BLOCK=block)
    return counts


def check_label_counts():
    labels = torch.randint(0, 5, (70,), dtype=torch.int32)
    want = torch.bincount(labels, minlength=5).to(torch.int32)
    torch.testing.assert_close(label_counts(labels, 5), want)
