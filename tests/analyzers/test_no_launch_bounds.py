"""Without a launch site, bounds are judged only where one size bounds every access.

The elementwise kernel (`offs < n`, every tensor n long) is judged, so its off-by-one is found.
A kernel whose addresses step over rows (`row * n_cols`) or whose mask is an expression of
sizes (`offs < n * K`) addresses tensors whose extents nobody established: no bounds finding.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEAD = """
import triton
import triton.language as tl


"""

_ELEMENTWISE = (
    _HEAD
    + """@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < {bound}
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""
)

_ROWS = (
    _HEAD
    + """@triton.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=mask)
"""
)

_PRODUCT = (
    _HEAD
    + """@triton.jit
def flat_kernel(x_ptr, out_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n * K
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
"""
)


def _bad(src: str) -> list[tuple[str, int]]:
    return [
        (f.code, f.line)
        for f in check_source(src, "unlaunched.py")
        if f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def test_the_elementwise_case_is_judged_and_its_bug_found() -> None:
    assert _bad(_ELEMENTWISE.format(bound="n")) == []
    assert any(code == "MB001" for code, _ in _bad(_ELEMENTWISE.format(bound="n + 1")))


def test_rows_stepped_by_a_runtime_size_are_not_judged_without_a_launch() -> None:
    assert _bad(_ROWS) == []


def test_a_mask_over_a_product_of_sizes_is_not_judged_without_a_launch() -> None:
    assert _bad(_PRODUCT) == []
