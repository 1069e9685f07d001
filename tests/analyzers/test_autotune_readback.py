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


UNSTATED = b'''import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def gate_grad_kernel(x_ptr, dg_ptr, n, H, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * H, mask=mask, other=0.0)
    BODY


def gate_grad(x, g):
    n, H = x.shape
    dg = torch.empty_like(g)
    gate_grad_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, dg, n, H)
    return dg
'''


def gr004_unstated(body: bytes) -> list[str]:
    found = check_source(UNSTATED.replace(b"BODY", body), "gate.py")
    return [f.message for f in found if f.code == "GR004"]


def test_reading_back_past_the_probe_buffer_of_an_unstated_extent_is_not_judged() -> None:
    # `dg` is `empty_like(g)` of a `g` the launcher never unpacks: its probe buffer is a guess,
    # stores past it are not tracked, so whether the element read back was this program's own
    # store is not known (fla-core simple_gla/parallel.py `dg`)
    body = b"""tl.store(dg_ptr + offs * H, x * 2.0, mask=mask)
    y = tl.load(dg_ptr + offs * H, mask=mask, other=0.0)
    tl.store(dg_ptr + offs * H, y + x, mask=mask)"""
    assert gr004_unstated(body) == []


def test_an_in_place_update_of_an_unstated_extent_is_still_found() -> None:
    body = b"""y = tl.load(dg_ptr + offs, mask=mask, other=0.0)
    tl.store(dg_ptr + offs, y + x, mask=mask)"""
    found = gr004_unstated(body)
    assert found and "`dg_ptr`" in found[0], found
