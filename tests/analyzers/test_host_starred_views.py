"""Launcher idioms of liger-kernel's attention and GRPO ops (issue 12, item 3):

- `*batch, L, _ = scores.shape` then `N = int(torch.prod(torch.tensor(batch)))` and
  `scores.view(N, L, L)`: the starred name takes the leading sizes, the product keeps their
  classes, so the view's strides are known (before: `batch` was never bound, the view unknown,
  and its strides stand-ins with an AR001 note);
- `len(q)` of a tensor: its first extent;
- `ids[:, -L:]`: the last L positions of a dimension, L's class kept; the view is a storage of
  its own (it starts past the first element).

Each idiom: the value is computed (no AR001 note), and a seeded bug that rests on it is found.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_MASK_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def mask_kernel(x_ptr, y_ptr, stride_b, stride_m, L, BLOCK: tl.constexpr):
    b = tl.program_id(1)
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < {bound}
    v = tl.load(x_ptr + b * stride_b + row * stride_m + cols, mask=m, other=0.0)
    v = tl.where(cols > row, 0.0, v)
    tl.store(y_ptr + b * stride_b + row * stride_m + cols, v, mask=m)


def mask_future(scores):
    *batch, L, _ = scores.shape
    N = int(torch.prod(torch.tensor(batch))) if batch else 1
    flat = scores.view(N, L, L)
    out = torch.empty_like(flat)
    mask_kernel[(L, N)](flat, out, flat.stride(0), flat.stride(1), L, BLOCK=triton.next_power_of_2(L))
    return out.view(*batch, L, L)
"""

_TAIL_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def pick_kernel(ids_ptr, out_ptr, stride_b, stride_l, L):
    b = tl.program_id(0)
    l = tl.program_id(1)
    i = tl.load(ids_ptr + b * stride_b + l * stride_l)
    tl.store(out_ptr + b * L + l{shift}, i)


def pick(logits, input_ids):
    B, L1, V = logits.shape
    L = L1 - 1
    input_ids = input_ids[:, -L:]
    out = torch.empty(B, L, dtype=torch.int64, device=logits.device)
    pick_kernel[(B, L)](input_ids, out, input_ids.stride(0), input_ids.stride(1), L)
    return out
"""


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_starred_shape_unpacking_and_a_product_of_its_sizes_bind_the_view() -> None:
    findings = check_source(_MASK_KERNEL.format(bound="L"), "mask.py")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]


def test_a_row_read_one_past_its_end_is_found_through_the_starred_view() -> None:
    findings = check_source(_MASK_KERNEL.format(bound="L + 1"), "mask.py")
    mb = [f for f in findings if f.code in ("MB001", "MB002") and f.severity == Severity.ERROR]
    assert mb, [(f.code, f.severity, f.message) for f in findings]


def test_a_trailing_slice_of_a_launcher_tensor_is_its_last_positions() -> None:
    findings = check_source(_TAIL_KERNEL.format(shift=""), "pick.py")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]


def test_a_store_shifted_past_the_output_is_found_with_the_trailing_slice() -> None:
    findings = check_source(_TAIL_KERNEL.format(shift=" + 1"), "pick.py")
    mb = [f for f in findings if f.code == "MB002" and f.severity == Severity.ERROR]
    assert mb, [(f.code, f.severity, f.message) for f in findings]


def test_starred_unpacking_of_an_unknown_value_leaves_every_name_unknown() -> None:
    src = _MASK_KERNEL.format(bound="L").replace("*batch, L, _ = scores.shape", "*batch, L, _ = other(scores)")
    findings = check_source("from elsewhere import other\n" + src, "mask.py")
    assert _notes(findings), [(f.code, f.message) for f in findings]
    assert not _failing(findings), [(f.code, f.message) for f in findings]


_LEN_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(q_ptr, out_ptr, Q, BLOCK_Q: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    v = tl.load(q_ptr + offs, mask=offs < Q)
    tl.store(out_ptr + offs, v * 2.0, mask=offs < {bound})


def scale(q):
    Q = len(q)
    out = torch.empty(Q, device=q.device, dtype=torch.float32)
    scale_kernel[(triton.cdiv(Q, 16),)](q, out, Q, BLOCK_Q=16)
    return out
"""


def test_len_of_a_tensor_is_its_first_extent() -> None:
    findings = check_source(_LEN_KERNEL.format(bound="Q"), "scale.py")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]
    bad = check_source(_LEN_KERNEL.format(bound="Q + 1"), "scale.py")
    # (`len(q)` does not say `q` is 1-d, so only the output allocated with Q elements is judged)
    assert [f for f in bad if f.code == "MB002" and f.severity == Severity.ERROR], [(f.code, f.message) for f in bad]
