"""GR004 on in-place updates: under autotuning every config runs on the same buffers, so a
kernel that reads a tensor before writing it must restore it; one that reads back only what it
stored itself first (a scratch row written, then read) leaves the same result after any number
of runs, and is not flagged (cause K11 of docs/realworld.md)."""

from __future__ import annotations

from argus.analyzers import check_source

KERNEL = b'''import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def scale_rows_kernel(x_ptr, tmp_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    BODY


def scale_rows(x):
    n = x.numel()
    tmp = torch.empty_like(x)
    scale_rows_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, tmp, n)
    return tmp
'''

READ_BACK = b"""x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(tmp_ptr + offs, x * 2.0, mask=mask)
    y = tl.load(tmp_ptr + offs, mask=mask, other=0.0)
    tl.store(tmp_ptr + offs, y + 1.0, mask=mask)"""

IN_PLACE = b"""x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(x_ptr + offs, x * 2.0, mask=mask)"""


def gr004(body: bytes) -> list[str]:
    found = check_source(KERNEL.replace(b"BODY", body), "rows.py")
    return [f.message for f in found if f.code == "GR004"]


def test_reading_back_its_own_store_is_not_an_autotune_hazard() -> None:
    assert gr004(READ_BACK) == []


def test_an_in_place_update_still_is() -> None:
    found = gr004(IN_PLACE)
    assert found and "`x_ptr`" in found[0], found
