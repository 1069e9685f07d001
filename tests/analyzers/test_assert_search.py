"""A probe size the launcher's equality asserts accept (model/assert_search.py): a size the
launcher computes from another (`HC` from `M` by `isqrt`) and then asserts against it holds
only at some sizes; the probe takes the nearest one the launcher runs through, so the launch
is judged (no AR001), a seeded overwrite is still found, and an assert no size satisfies still
leaves the kernel unjudged with the AR001 naming it."""

from __future__ import annotations

from argus.analyzers import Severity, check_source

SOURCE = """
import math
import torch
import triton
import triton.language as tl


@triton.jit
def split_kernel(mix_ptr, out_ptr, M: tl.constexpr, HC: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(mix_ptr + row * M + offs, mask=offs < HC * HC, other=0.0)
    tl.store(out_ptr + row * HC * HC + offs, x, mask=offs {op} HC * HC)


def split(mix):
    N, M = mix.shape
    HC = int((math.isqrt(4 + 4 * M) - 2) // 2)
    assert {check}
    out = torch.empty((N, HC, HC), device=mix.device, dtype=mix.dtype)
    BLOCK = triton.next_power_of_2(HC * HC + 1)
    split_kernel[(N,)](mix, out, M, HC, BLOCK)
    return out
"""

GOOD = "HC * HC + 2 * HC == M"


def _findings(op: str = "<", check: str = GOOD):
    return check_source(SOURCE.format(op=op, check=check), path="mhc_like.py")


def test_size_the_assert_accepts_is_probed():
    fs = _findings()
    assert not [f for f in fs if f.code == "AR001"], [f.message for f in fs]
    assert not [f for f in fs if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_seeded_overwrite_found_at_the_accepted_size():
    fs = _findings(op="<=")  # one element past each row of `out`: past its end on the last
    bad = [f for f in fs if f.code == "MB002" and f.severity == Severity.ERROR]
    assert bad, [(f.code, f.severity, f.message) for f in fs]


def test_assert_no_size_satisfies_stays_unjudged():
    fs = _findings(op="<=", check="HC * HC + 2 * HC == M + 1")
    notes = [f.message for f in fs if f.code == "AR001"]
    assert any("consistent with the launcher's" in m for m in notes), notes
    assert not [f for f in fs if f.severity in (Severity.ERROR, Severity.WARNING)]
