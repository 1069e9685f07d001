"""MB005's severity follows what the code establishes about a loaded index's range.

The same unchecked gather (`table[ids]`) is a hint that names the caller's contract when nothing
in the file says an id can be out of range, and a warning as soon as the code shows a sentinel:
a negative `other=`, a comparison elsewhere, a sentinel parameter, a negative fill on the host.
"""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source

_SRC = """
import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(ids_ptr, table_ptr, out_ptr, n_tokens, dim, {extra_param}BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_tokens
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other={other}).to(tl.int64)
    mask = t_mask[:, None] & (offs_d[None, :] < dim)
    rows = tl.load(table_ptr + ids[:, None] * dim + offs_d[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + offs_t[:, None].to(tl.int64) * dim + offs_d[None, :], rows, mask=mask)
    {elsewhere}


def gather(ids, table{extra_arg_def}):
    n_tokens = ids.numel()
    vocab, dim = table.shape
    {host}
    out = torch.empty((n_tokens, dim), dtype=table.dtype, device=table.device)
    gather_kernel[(triton.cdiv(n_tokens, 16),)](ids, table, out, n_tokens, dim, {extra_arg}BLOCK_T=16, BLOCK_D=64)
    return out
"""

_PLAIN = dict(extra_param="", other="0", elsewhere="", extra_arg_def="", host="", extra_arg="")


def _mb005(**change: str) -> list:
    src = _SRC.format(**{**_PLAIN, **change})
    return [f for f in check_source(src, "gather.py") if f.code == "MB005"]


def test_without_evidence_the_callers_contract_is_trusted_and_named() -> None:
    found = _mb005()
    assert found and all(f.severity is Severity.HINT for f in found)
    assert "caller's contract" in found[0].message


@pytest.mark.parametrize(
    "change",
    [
        {"other": "-1"},
        {"elsewhere": "tl.store(out_ptr, tl.sum((ids == -1).to(tl.int32), axis=0))"},
        {
            "extra_param": "ignore_index, ",
            "extra_arg_def": ", ignore_index=-100",
            "extra_arg": "ignore_index, ",
        },
        {"host": "ids = torch.where(ids < vocab, ids, torch.full_like(ids, -1))"},
    ],
    ids=["negative-other", "sentinel-compared-elsewhere", "sentinel-parameter", "host-negative-fill"],
)
def test_a_sentinel_the_code_shows_makes_it_a_warning(change: dict[str, str]) -> None:
    found = _mb005(**change)
    assert found and all(f.severity is Severity.WARNING for f in found), [
        (f.severity, f.message) for f in found
    ]
    assert "out-of-range values exist here" in found[0].message


def test_comparing_the_index_with_a_tile_is_not_evidence_of_a_sentinel() -> None:
    # a one-hot (`offs_d == ids`) uses the id as data; it says nothing about its range
    found = _mb005(
        elsewhere="tl.store(out_ptr + offs_d, (offs_d[None, :] == ids[:, None]).to(tl.float32).sum(0))"
    )
    assert found and all(f.severity is Severity.HINT for f in found), [(f.severity, f.message) for f in found]
