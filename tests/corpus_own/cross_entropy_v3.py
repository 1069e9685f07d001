import sys

import torch
import triton
import triton.language as tl


@triton.jit
def cross_entropy_fwd_kernel(
    logits_ptr, targets_ptr, loss_ptr, lse_ptr,
    V, stride_row, ignore_index,
    BLOCK_V: tl.constexpr,
):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    target = tl.load(targets_ptr + row)
    if target == ignore_index:
        tl.store(loss_ptr + row, 0.0)
        tl.store(lse_ptr + row, 0.0)
        return

    # online logsumexp over the vocabulary, one chunk at a time
    m = float("-inf")
    s = 0.0
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s + tl.sum(tl.exp(x - m_new), axis=0)  # expect: NU002
        m = m_new
    lse = m + tl.log(s)

    x_target = tl.load(row_ptr + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - x_target)
    tl.store(lse_ptr + row, lse)


def cross_entropy(logits, targets, ignore_index=-100, loss=None, lse=None):
    """Per-row loss; rows whose target is ignore_index get loss 0."""
    n_rows, V = logits.shape
    assert logits.stride(1) == 1
    if loss is None:
        loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    if lse is None:
        lse = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    BLOCK_V = min(1024, triton.next_power_of_2(V))
    cross_entropy_fwd_kernel[(n_rows,)](
        logits, targets, loss, lse, V, logits.stride(0), ignore_index, BLOCK_V=BLOCK_V,
    )
    return loss, lse


def reference(logits, targets, ignore_index=-100):
    return torch.nn.functional.cross_entropy(
        logits.float(), targets.long(), ignore_index=ignore_index, reduction="none"
    )


if __name__ == "__main__":
    import _check as c

    def case(n_rows, V, scale):
        logits = c.padded((torch.randn(n_rows, V) * scale).to(torch.bfloat16), col_pad=4)
        t = torch.randint(0, V, (n_rows,), dtype=torch.int32)
        t[:: 3] = -100
        targets = c.padded(t)
        loss = c.poisoned((n_rows,))
        lse = c.poisoned((n_rows,))
        cross_entropy(logits, targets, loss=loss, lse=lse)
        return c.close("loss", loss, reference(logits, targets), atol=1e-3, rtol=1e-3)

    c.main(case, [(1, 10, 1.0), (5, 1000, 2.0), (7, 3000, 4.0), (4, 5000, 30.0)])
