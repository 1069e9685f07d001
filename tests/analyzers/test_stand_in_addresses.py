"""A stand-in value (a launcher value the evaluator cannot compute, named in an AR001) that the
kernel's addresses are computed from: a stride (`x + row * stride_x_n`) or an offset the
pointer is moved by (`x_ptr += row` of a `row = pid + ROW_OFFSET`). The probe reads wherever
the stand-in sends it, so no bound of that tensor is judged (model/binder_values.py); before,
only a stand-in that bounds an index (a size compared with offsets, a tile) was treated so,
and fla's `causal_conv1d_update` and `grpo` (Ascend) kernels got false errors.

Each case: the AR001 note stays (the value is not known), no error rests on the stand-in, and
the same kernel launched with the value computed is judged (its seeded bug is found).
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
from somewhere_else import row_stride, launch_chunks

@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_x, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_x + offs, mask={mask})
    tl.store(y_ptr + row * N + offs, v, mask=offs < N)

@triton.jit
def shifted_kernel(x_ptr, y_ptr, N, ROW_OFFSET: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0) + ROW_OFFSET
    x_ptr += row * N
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask={mask})
    tl.store(y_ptr + offs, v, mask=offs < N)
"""


def _check(launcher: str, mask: str = "offs < N") -> list:
    return check_source(_HEADER.format(mask=mask) + launcher, "stand_in_.py")


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity == Severity.ERROR and f.code in ("MB001", "MB002")]


_STRIDE = """
def rows(x):
    R, N = x.shape
    y = torch.empty_like(x)
    rows_kernel[(R,)](x, y, {stride}, N, BLOCK=triton.next_power_of_2(N))
"""


def test_a_stand_in_stride_leaves_the_tensor_unjudged() -> None:
    out = _check(_STRIDE.format(stride="row_stride(x)"), mask="None")
    assert any("`stride_x`" in n for n in _notes(out)), _notes(out)
    assert not [f for f in _errors(out) if "`x_ptr`" in f.message], [(f.code, f.message) for f in out]


def test_the_same_kernel_with_a_known_stride_is_judged() -> None:
    out = _check(_STRIDE.format(stride="x.stride(0)"), mask="None")
    assert [f for f in _errors(out) if "`x_ptr`" in f.message], [(f.code, f.severity, f.message) for f in out]


_SHIFTED = """
def shifted(x):
    R, N = x.shape
    y = torch.empty(N, device=x.device, dtype=x.dtype)
    for offset, count in launch_chunks(R):
        shifted_kernel[(count,)](x, y, N, ROW_OFFSET=offset, BLOCK=triton.next_power_of_2(N))
"""

_SHIFTED_KNOWN = """
def shifted(x):
    R, N = x.shape
    y = torch.empty(N, device=x.device, dtype=x.dtype)
    shifted_kernel[(R,)](x, y, N, ROW_OFFSET=1, BLOCK=triton.next_power_of_2(N))
"""


def test_a_pointer_moved_by_a_stand_in_offset_is_unjudged() -> None:
    out = _check(_SHIFTED)
    assert any("`ROW_OFFSET`" in n for n in _notes(out)), _notes(out)
    assert not [f for f in _errors(out) if "`x_ptr`" in f.message], [(f.code, f.message) for f in out]


def test_a_pointer_moved_by_a_known_offset_is_judged() -> None:
    # rows 1..R of an R-row tensor: the last program reads the row after it
    out = _check(_SHIFTED_KNOWN)
    assert [f for f in _errors(out) if "`x_ptr`" in f.message], [(f.code, f.severity, f.message) for f in out]
