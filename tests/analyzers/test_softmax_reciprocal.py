"""A sum's reciprocal normalizes what it scales, as a division by the sum does.

flag-gems' mHC kernels (`fused/mhc/hc_split_sinkhorn.py`, `mhc_pre.py`) run Sinkhorn on a small
matrix held in scalars: each row is a softmax against the row's own max, made a probability by
`x * (1.0 / row_sum)`, and the columns then add values of different rows. The scale tags saw
`1.0 / row_sum` as a plain number, so each value stayed "relative to its row's max" and the
column sum was taken for two blocks of an online softmax against different maxes (NU002). A
value over its own sum holds no scale any more, whichever way it was divided; the same
reciprocal taken inside a flash-attention loop is still an early normalization (NU005)."""

from __future__ import annotations

import os
from pathlib import Path

from argus.analyzers import check_source

SINKHORN = """
import torch
import triton
import triton.language as tl


@triton.jit
def sinkhorn_kernel(x_ptr, y_ptr, n_rows, stride_x, stride_y, ITERS: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride_x
    a0 = tl.load(base + 0)
    a1 = tl.load(base + 1)
    b0 = tl.load(base + 2)
    b1 = tl.load(base + 3)
    ma = tl.maximum(a0, a1)
    a0 = tl.exp(a0 - ma)
    a1 = tl.exp(a1 - ma)
    inv_a = 1.0 / (a0 + a1)
    a0 = a0 * inv_a
    a1 = a1 * inv_a
    mb = tl.maximum(b0, b1)
    b0 = tl.exp(b0 - mb)
    b1 = tl.exp(b1 - mb)
    inv_b = 1.0 / (b0 + b1)
    b0 = b0 * inv_b
    b1 = b1 * inv_b
    inv_c0 = 1.0 / (a0 + b0 + 1e-6)
    inv_c1 = 1.0 / (a1 + b1 + 1e-6)
    for _ in range(ITERS - 1):
        a0 *= inv_c0
        b0 *= inv_c0
        a1 *= inv_c1
        b1 *= inv_c1
        inv_c0 = 1.0 / (a0 + b0 + 1e-6)
        inv_c1 = 1.0 / (a1 + b1 + 1e-6)
    out = y_ptr + row * stride_y
    tl.store(out + 0, a0)
    tl.store(out + 1, a1)
    tl.store(out + 2, b0)
    tl.store(out + 3, b1)


def sinkhorn(x, iters=4):
    n_rows, width = x.shape
    assert width == 4
    y = torch.empty_like(x)
    sinkhorn_kernel[(n_rows,)](x, y, n_rows, x.stride(0), y.stride(0), ITERS=iters)
    return y
"""

SHARED = Path(os.environ.get("ARGUS_SHARED_CORPUS", Path(__file__).parents[3] / "shared" / "corpus"))


def whole(text: str) -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in check_source(text, "k.py") if f.code in ("NU002", "NU005"))


def test_rows_normalized_by_their_sums_reciprocal_may_be_added() -> None:
    assert whole(SINKHORN) == []


def test_a_row_left_unnormalized_is_still_found() -> None:
    wrong = SINKHORN.replace("    b0 = b0 * inv_b\n", "")
    assert whole(wrong), "a column sum of a probability and a raw exp(x - m) must stay a finding"


def test_a_row_scaled_by_the_other_rows_reciprocal_is_still_found() -> None:
    wrong = SINKHORN.replace("    b1 = b1 * inv_b\n", "    b1 = b1 * inv_a\n")
    assert whole(wrong), "a value over another max's sum must stay a finding"


def test_a_reciprocal_taken_inside_the_attention_loop_is_still_an_early_normalization() -> None:
    text = (SHARED / "flash_attn_v3.py").read_text()
    line = "        acc = acc / l_i[:, None]  # expect: NU005\n"
    assert line in text
    by_reciprocal = text.replace(line, "        acc = acc * (1.0 / l_i)[:, None]  # expect: NU005\n")
    assert ("NU005", text.splitlines().index(line.rstrip("\n")) + 1) in whole(by_reciprocal)
