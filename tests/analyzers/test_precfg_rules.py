"""Issue 12, flag-gems' false findings (branch `precfg`): a program storing again the very value
another program stored (wrapped tail lanes, GR002), ... Each correct form is clean; the seeded
bug of the same shape stays found."""

from __future__ import annotations

from argus.analyzers import Severity, check_source


def _bad(text: str) -> list[str]:
    findings = check_source(text, "t.py")
    return [f.code for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


_WRAPPED_TAIL = """
import torch
import triton
import triton.language as tl


@triton.jit
def nearest_up(out_ptr, in_ptr, OH, OW, IH, IW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    ow = idx % OW
    oh = idx // OW % OH
    ih = tl.minimum(oh * IH // OH, IH - 1)
    iw = tl.minimum(ow * IW // OW, IW - 1)
    x = tl.load(in_ptr + ih * IW + iw)
    tl.store(out_ptr + oh * OW + ow, {value})


def up(x, OH, OW):
    IH, IW = x.shape
    out = torch.empty((OH, OW), device=x.device, dtype=x.dtype)
    nearest_up[({programs},)](out, x, OH, OW, IH, IW, BLOCK=64)
    return out
"""


def test_wrapped_tail_lanes_storing_the_same_value_are_not_a_race() -> None:
    """flag-gems' `upsample_nearest2d`: no mask, `idx // OW % OH` wraps the last program's lanes
    onto rows program 0 stores, with the value read from the same input element."""
    assert _bad(_WRAPPED_TAIL.format(value="x", programs="triton.cdiv(OH * OW, 64)")) == []


def test_wrapped_lanes_storing_a_value_of_their_own_program_stay_a_race() -> None:
    """The seeded bug: the wrapped lanes store a value that depends on their program (here its
    id added in), so the element ends with whichever program lands last."""
    assert "GR002" in _bad(_WRAPPED_TAIL.format(value="x + pid", programs="triton.cdiv(OH * OW, 64)"))


def test_one_program_too_many_storing_partial_values_stays_a_race() -> None:
    """Programs past the data that load other input rows than the first program (`ih` shifted
    by the program) write different values to the same element: a race."""
    src = _WRAPPED_TAIL.replace("x = tl.load(in_ptr + ih * IW + iw)", "x = tl.load(in_ptr + ((ih + pid) % IH) * IW + iw)")
    assert "GR002" in _bad(src.format(value="x", programs="triton.cdiv(OH * OW, 64)"))
