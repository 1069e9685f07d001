"""`torch.empty(shape)` of a shape the launcher evaluator cannot know (a call into a module it
does not read) is a tensor of unknown extent: bounds on it are not judged (issue 12, rule 1).
It used to be taken as a 0-d tensor, so every store to it was "out of bounds"."""

from __future__ import annotations

from argus.analyzers import check_source
from argus.analyzers.findings import Severity

LAUNCHER = b'''import torch
import triton
import triton.language as tl
import somewhere


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def copy(x):
    y = torch.empty(SHAPE, device=x.device, dtype=x.dtype)
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
'''


def serious(source: bytes) -> list[tuple[str, int]]:
    found = check_source(source, "copy.py")
    return [(f.code, f.span.line) for f in found if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_an_unknown_allocation_shape_is_not_judged() -> None:
    assert serious(LAUNCHER.replace(b"SHAPE", b"somewhere.out_shape(x)")) == []
    assert serious(LAUNCHER.replace(b"SHAPE", b"x.shape[0], somewhere.width(x)")) == []


def test_a_known_allocation_shape_still_is() -> None:
    assert serious(LAUNCHER.replace(b"SHAPE", b"x.numel()")) == []
    short = LAUNCHER.replace(b"SHAPE", b"x.numel() - 1")
    assert ("MB002", 10) in serious(short)
