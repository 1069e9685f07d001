"""MB003's severity follows what the launch says about sizes (issue 12: a warning where the
tensor can realistically pass 2^31 elements, a hint naming the assumption otherwise)."""

from __future__ import annotations

from argus.analyzers import check_source
from argus.analyzers.findings import Severity

SOURCE = b'''import torch
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, m_ptr, idx_ptr, n_cols, stride, topk, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(m_ptr + row, tl.max(x, 0))
    tl.store(idx_ptr + row * topk + offs, offs, mask=offs < topk)


def row_max(x):
    n_rows, n_cols = x.shape
    m = torch.empty(n_rows, device=x.device)
    idx = torch.empty(n_rows, 8, device=x.device, dtype=torch.int32)
    row_max_kernel[(n_rows,)](x, m, idx, n_cols, x.stride(0), 8, BLOCK=triton.next_power_of_2(n_cols))
'''


def mb003_by_line(source: bytes) -> dict[int, tuple[Severity, str]]:
    return {f.span.line: (f.severity, f.message) for f in check_source(source, "rows.py") if f.code == "MB003"}


def test_a_row_index_times_a_row_stride_is_a_warning() -> None:
    severity, message = mb003_by_line(SOURCE)[10]
    assert severity is Severity.WARNING, message
    assert "hint" not in message


def test_a_factor_the_launch_fixes_is_a_hint_naming_it() -> None:
    severity, message = mb003_by_line(SOURCE)[12]
    assert severity is Severity.HINT, message
    assert "`topk` as a fixed number" in message and "2^31 / 8" in message


def test_the_same_factor_from_a_problem_size_is_a_warning() -> None:
    grown = SOURCE.replace(b"torch.empty(n_rows, 8,", b"torch.empty(n_rows, n_cols,").replace(
        b"x.stride(0), 8, BLOCK", b"x.stride(0), n_cols, BLOCK"
    )
    severity, message = mb003_by_line(grown)[12]
    assert severity is Severity.WARNING, message


def test_a_tensor_whose_shape_nobody_states_is_a_hint() -> None:
    unstated = SOURCE.replace(b"def row_max(x):", b"def row_max(x, idx):").replace(
        b"    idx = torch.empty(n_rows, 8, device=x.device, dtype=torch.int32)\n", b""
    ).replace(b"x.stride(0), 8, BLOCK", b"x.stride(0), idx.stride(0), BLOCK")
    found = mb003_by_line(unstated)
    assert found[10][0] is Severity.WARNING
    severity, message = found[12]
    assert severity is Severity.HINT, message
    assert "does not state the shape of `idx_ptr`" in message
