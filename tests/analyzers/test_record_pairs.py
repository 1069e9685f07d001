"""A table read at `2 * i` and `2 * i + 1` holds records of two fields, not the bounds of
group i (model/scan.py, fgprec6). flag-gems' kron reads `(a_idx, b_idx)` pairs its launcher
fills on the host; taken for a prefix-sum table, its synthesized contents (a partition of the
rows) sent `b_idx` past B's one batch, and MB001 reported a read the launcher never makes."""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.scan import scan_kernel

_PAIRS = """
import torch
import triton
import triton.language as tl


@triton.jit
def pairs_kernel(a_ptr, b_ptr, c_ptr, map_ptr, batch_size, N, BLOCK: tl.constexpr):
    batch_id = tl.program_id(0)
    offset = {offset}
    valid = batch_id < batch_size
    a_batch = tl.load(map_ptr + offset, mask=valid)
    b_batch = tl.load(map_ptr + offset + 1, mask=valid)
    n = tl.arange(0, BLOCK)
    m = (n < N) & valid
    a = tl.load(a_ptr + a_batch * N + n, mask=m)
    b = tl.load(b_ptr + b_batch * N + n, mask=m)
    tl.store(c_ptr + batch_id * N + n, a * b, mask=m)


def pairs(a, b, batch_size):
    N = a.shape[-1]
    c = torch.empty((batch_size, N), device=a.device, dtype=a.dtype)
    index_map = torch.empty(batch_size * 2, device=a.device, dtype=torch.int64)
    for i in range(batch_size):
        index_map[i * 2] = i % a.shape[0]
        index_map[i * 2 + 1] = i % b.shape[0]
    pairs_kernel[(batch_size,)](a, b, c, index_map, batch_size, N, BLOCK=triton.next_power_of_2(N))
    return c
"""


def _policy(offset: str):
    tree = ast.parse(_PAIRS.format(offset=offset))
    func = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "pairs_kernel")
    return scan_kernel(func, [a.arg for a in func.args.args]).policies.get("map_ptr")


def test_a_record_of_two_fields_is_not_a_prefix_table() -> None:
    pol = _policy("batch_id * 2")
    assert pol is None or not pol.prefix


def test_bounds_of_group_i_are_still_a_prefix_table() -> None:
    assert _policy("batch_id").prefix


def test_the_pairs_kernel_reads_nothing_out_of_bounds() -> None:
    text = _PAIRS.format(offset="batch_id * 2")
    bad = [f.code for f in check_source(text, "t.py") if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert "MB001" not in bad
