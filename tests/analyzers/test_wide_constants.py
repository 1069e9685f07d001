"""Module constants wider than int64 (sglang's `CANARY_CHAIN_ANCHOR = 0xC0FFEE1234567890`, a
`(1 << 64) - 1` mask) crashed the checker when the module was read as a helper's home: a
64-bit unsigned constant is Triton's uint64, and a wider one is no Triton constant at all."""

from __future__ import annotations

import ast

from argus.analyzers import check_source
from argus.analyzers.interp.values import scalar
from argus.analyzers.module_constants import _const_value

_KERNEL = """
import triton
import triton.language as tl

ANCHOR = 0xC0FFEE1234567890
MASK = (1 << 64) - 1
HUGE = 1 << 70


@triton.jit
def mix(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.uint64)
    tl.store(y_ptr + offs, x ^ ANCHOR, mask=m)


def run(x, y):
    n = x.numel()
    mix[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
"""


def test_a_module_with_constants_past_int64_is_checked_not_crashed() -> None:
    findings = check_source(_KERNEL, "canary.py")
    assert all(f.code != "AR002" for f in findings), [f.message for f in findings]


def test_a_64_bit_unsigned_constant_is_a_uint64_and_a_wider_one_is_unknown() -> None:
    v = scalar(0xC0FFEE1234567890)
    assert v.dtype == "uint64" and int(v.data) == 0xC0FFEE1234567890 - 2**64  # (its bits)
    assert _const_value(ast.parse("(1 << 64) - 1", mode="eval").body).dtype == "uint64"
    assert _const_value(ast.parse("1 << 70", mode="eval").body) is None
