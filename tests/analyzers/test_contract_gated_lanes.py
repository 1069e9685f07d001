"""Two guesses that a public package's correct kernels were judged on (unsloth 2026.10.9).

- `large_head_attention.py` keeps each query row's keys inside a window `[lo, hi]` loaded per
  row (`keep = (cur >= lo) & (cur <= hi)`), then `tl.where(keep, s, -inf)`; the key tile's tail
  (`cur >= S`, loaded as 0) passes `keep` only when a loaded `hi` reaches past the data. The
  probe's synthesized lengths do (0, 33, 1, 70, 17), the caller's windows do not: a DF003 error
  rested on contents the code never produces. A choice made by a test on loaded integers now
  leaves the lanes it lets through unjudged for padding.
- `nvfp4.py` hands `partial.shape[0]` to `SPLIT: tl.constexpr`, a `tl.static_range` count, and
  reads the (split, M, N) buffer flat: the launcher read only `shape[0]`, and a row count passed
  on was taken to say the tensor is 1-D, so every read past the second element was "out of
  bounds". A row count that reaches only constexprs and loop counts measures nothing now.
Each keeps its real bug found: the window kernel without the `col_ok` mask on the keys'
data, and the split kernel reading one split too many from a buffer whose shape is written out.
"""

from __future__ import annotations

from tests.analyzers.kernel_checks import failing

WINDOWED = """
@triton.jit
def windowed_max_kernel(X, LO, HI, OUT, S, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    row_ok = offs_m < S
    lo = tl.load(LO + offs_m, mask=row_ok, other=S)
    hi = tl.load(HI + offs_m, mask=row_ok, other=-1)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    for start_n in range(0, S, BLOCK_N):
        cur = start_n + offs_n
        col_ok = cur < S
        x = tl.load(X + cur, mask=col_ok, other=0.0)
        keep = (cur[None, :] >= lo[:, None]) & (cur[None, :] <= hi[:, None])
        s = tl.where(keep, x[None, :], float("-inf"))
        m = tl.maximum(m, tl.max(s, 1))
    tl.store(OUT + offs_m, m, mask=row_ok)


def windowed_max(x, lo, hi):
    S = x.shape[0]
    out = torch.empty(S, dtype=torch.float32, device=x.device)
    windowed_max_kernel[(triton.cdiv(S, 32),)](x, lo, hi, out, S, BLOCK_M=32, BLOCK_N=32)
    return out
"""


def test_padding_let_through_by_a_loaded_window_is_not_judged() -> None:
    assert [c for c in failing(WINDOWED) if c[0] == "DF003"] == []


def test_padding_that_reaches_the_max_without_any_test_is_still_found() -> None:
    mutant = WINDOWED.replace('s = tl.where(keep, x[None, :], float("-inf"))', "s = x[None, :] + 0.0 * lo[:, None]")
    assert ("DF003", 22) in failing(mutant), failing(mutant)


SPLIT_SUM = """
@triton.jit
def split_sum_kernel(partial_ptr, out_ptr, numel, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    acc = tl.load(partial_ptr + offs, mask=mask, other=0.0)
    for i in tl.static_range(1, SPLIT):
        acc += tl.load(partial_ptr + i * numel + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


def split_sum(partial, out):
    numel = out.numel()
    split_sum_kernel[(triton.cdiv(numel, 1024),)](partial, out, numel, SPLIT=partial.shape[0], BLOCK=1024)
    return out
"""


def test_a_row_count_handed_to_a_constexpr_does_not_make_a_tensor_1d() -> None:
    assert failing(SPLIT_SUM) == []


def test_a_split_too_many_is_found_where_the_shape_is_written_out() -> None:
    mutant = SPLIT_SUM.replace("tl.static_range(1, SPLIT)", "tl.static_range(1, SPLIT + 1)").replace(
        "    numel = out.numel()\n",
        "    split, rows, cols = partial.shape\n    numel = out.numel()\n",
    )
    assert "split, rows, cols" in mutant
    assert ("MB001", 11) in failing(mutant), failing(mutant)
