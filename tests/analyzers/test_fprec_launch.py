"""Issue 12, rule 1, launcher side (branch `fprec`): findings stand only on what the launcher
establishes. A launch under a size test the probe's sizes do not satisfy; a divisor the
launcher does not give; an allocation an earlier call of the launcher received; asserts of
allowed values written with `or`; Triton's `next_power_of_2` of 0; a kernel with no launch
whose offsets are scaled. Each case has its correct form (clean, or a hint naming the
assumption) and a seeded bug that what the code states still exposes."""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.launch_guards import empty_range
from argus.analyzers.model.launch_shared import passed_before
from argus.analyzers.model.launch_site import LaunchSite


def _bad(text: str) -> list[tuple[str, int]]:
    findings = check_source(text, "t.py")
    return [(f.code, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


_GUARDED = """
import torch
import triton
import triton.language as tl


@triton.jit
def partial_counts(x_ptr, part_ptr, N, PARTS, numel, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    offs = row * N + cols
    x = tl.load(x_ptr + offs, mask=(offs < numel) & (cols < N), other=0)
    tl.store(part_ptr + row * PARTS + blk, tl.sum((x != 0).to(tl.int32)))


def counts(x, dim):
    shape = x.shape
    numel = x.numel()
    parts = list(shape)
    parts[dim] = triton.cdiv(parts[dim], 64)
    {guard}
        part = torch.zeros(parts, dtype=torch.int32, device=x.device)
        grid = (triton.cdiv(numel, shape[dim]), {grid_parts}, 1)
        partial_counts[grid](x, part, shape[dim], parts[dim], numel, BLOCK=64)
        return part
    return None
"""


def test_a_launch_under_an_undecided_size_test_is_judged_as_a_pick() -> None:
    """`if parts[dim] != 1:` is false at the probe's sizes (a column count under 64 at the picked
    `dim`): the probe is a launch the test excludes, so what it shows past `part` is a hint that
    names the test (main reported an MB002 error on flag-gems `count_nonzero_combin_kernel` for
    this reason). The grid here has one program too many along axis 1, a real bug."""
    text = _GUARDED.format(guard="if parts[dim] != 1:", grid_parts="parts[dim] + 1")
    assert _bad(text) == []
    hints = [f for f in check_source(text, "t.py") if f.code == "MB002"]
    assert hints and all(f.severity == Severity.HINT and "parts[dim] != 1" in f.message for f in hints)


def test_the_same_launch_outside_any_test_keeps_its_severity() -> None:
    """Only a guard the probe's sizes do not satisfy demotes: the same launch (one program too
    many) under a test that holds (`if True:`) is judged as before, an error."""
    text = _GUARDED.format(guard="if True:", grid_parts="parts[dim] + 1")
    assert ("MB002", _line_of(text, "tl.store(part_ptr")) in _bad(text)


def test_a_launch_with_as_many_programs_as_parts_is_correct() -> None:
    """The same launch with one program per part (the grid `parts[dim]`) stores inside `part`
    at every picked `dim`: nothing to report, under the test or not."""
    for guard in ("if parts[dim] != 1:", "if True:"):
        assert _bad(_GUARDED.format(guard=guard, grid_parts="parts[dim]")) == [], guard


_RACY = """
import torch
import triton
import triton.language as tl


@triton.jit
def col_sum(x_ptr, out_ptr, n_rows, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=(cols < N) & (row < n_rows), other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))


def total(x):
    n_rows, N = x.shape
    out = torch.empty((1,), device=x.device, dtype=torch.float32)
    if N <= 2048:
        return x.sum().reshape(1)
    else:
        col_sum[(n_rows,)](x, out, n_rows, N, BLOCK=triton.next_power_of_2(N))
    return out
"""


def test_a_race_under_a_contradicted_test_stays_an_error() -> None:
    """Only bounds and coverage measure the sizes: every program storing `out[0]` is a race at
    any size, so the `else` of `N <= 2048` (which the probe's small N contradicts) keeps it
    (liger-kernel's Ascend `poly_norm.py`, a real bug)."""
    assert ("GR002", _line_of(_RACY, "tl.store(out_ptr")) in _bad(_RACY)


_SPLIT = """
import torch
import triton
import triton.language as tl
from elsewhere import channels_of


@triton.jit
def per_channel(x_ptr, w_ptr, out_ptr, M, C, N, TILE: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    cols = tl.arange(0, TILE)
    w = tl.load(w_ptr + c)
    x = tl.load(x_ptr + pid * N + cols, mask=(cols < N) & (pid < M), other=0.0)
    tl.store(out_ptr + pid * N + cols, x * w, mask=(cols < N) & (pid < M))


def scale(x, w):
    B = x.shape[0]
    C = {channels}
    N = x.shape[-1]
    M = {rows}
    out = torch.empty_like(x)
    per_channel[(M,)](x, w, out, M, C, N, TILE=triton.next_power_of_2(N))
    return out
"""


def test_a_grid_split_by_a_stand_in_divisor_is_not_judged() -> None:
    """`C` comes from a function outside the package: the probe's 3 is a stand-in, and a grid
    of M programs not a multiple of it says nothing (flag-gems `instance_norm`, GR003)."""
    assert _bad(_SPLIT.format(channels="channels_of(x)", rows="x.numel() // N")) == []


def test_a_grid_split_by_a_known_divisor_is_judged() -> None:
    """Seeded bug: C is the tensor's own axis and the grid launches one program too many."""
    text = _SPLIT.format(channels="x.shape[1]", rows="B * C + 1")
    assert ("GR003", _line_of(text, "c = pid % C")) in _bad(text)


_TWO_WRITERS = """
import torch
import triton
import triton.language as tl
from elsewhere import fill_diagonal_blocks


@triton.jit
def lower_blocks(a_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    m = (rows < N) & (pid % 2 == 1)
    tl.store(a_ptr + rows, tl.zeros([BLOCK], dtype=tl.float32) + 1.0, mask=m)


def build(x):
    N = x.shape[0]
    a = torch.empty((N,), device=x.device, dtype=torch.float32)
    {before}
    lower_blocks[(triton.cdiv(N, 16),)](a, N, BLOCK=16)
    return a
"""


def test_an_allocation_an_earlier_call_received_is_not_judged_for_coverage() -> None:
    """`fill_diagonal_blocks(x, a)` may write the blocks this kernel leaves (fla's precond_kda
    `Aqk`, written by two kernels of one launcher): no GR001."""
    assert _bad(_TWO_WRITERS.format(before="fill_diagonal_blocks(x, a)")) == []


def test_an_allocation_only_this_kernel_writes_keeps_its_coverage_judged() -> None:
    text = _TWO_WRITERS.format(before="pass")
    assert ("GR001", _line_of(text, "tl.store(a_ptr")) in _bad(text)


def test_passed_before_ignores_library_calls_and_methods() -> None:
    src = (
        "def f(x):\n"
        "    a = torch.empty(4)\n"
        "    torch.nn.init.zeros_(a)\n"
        "    x.copy_(a)\n"
        "    k[(1,)](a)\n"
        "    helper(a)\n"
    )
    tree = ast.parse(src)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    call = next(n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    data = src.encode()
    starts = [0]
    for line in data.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    site = LaunchSite(call, func, func.body, SourceMap(data, starts, 0, 0))
    assert not passed_before(site, "a")  # torch's and a local's methods; helper(a) comes after


_ALLOWED = """
import torch
import triton
import triton.language as tl


@triton.jit
def head_rows(q_ptr, o_ptr, H, D, TAIL: tl.constexpr, BH: tl.constexpr, DP: tl.constexpr):
    t = tl.program_id(0)
    h = tl.arange(0, BH)
    d = tl.arange(0, DP)
    m = (h[:, None] < H) & (d[None, :] < TAIL)
    x = tl.load(q_ptr + t * H * D + h[:, None] * D + (D - TAIL) + d[None, :], mask=m, other=0.0)
    tl.store(o_ptr + t * H * TAIL + h[:, None] * TAIL + d[None, :], x, mask=m)


def tails(q):
    T, H, D = q.shape
    assert {allowed}
    TAIL = 64
    o = torch.empty((T, H, TAIL), device=q.device, dtype=q.dtype)
    head_rows[(T,)](q, o, H, D, TAIL, BH=triton.next_power_of_2(H), DP=64)
    return o
"""


def test_allowed_values_written_with_or_bound_the_probe() -> None:
    """`D == 576 or D == 512` is `D in (576, 512)`: the probe's D is one of them, never a small
    size that makes `D - TAIL` negative (flag-gems `flashmla_sparse`, MB001)."""
    assert _bad(_ALLOWED.format(allowed="D == 576 or D == 512")) == []
    assert ("MB001", _line_of(_ALLOWED, "x = tl.load")) in _bad(_ALLOWED.format(allowed="D > 0"))


def test_an_empty_arange_is_no_launch_unless_a_test_guards_it() -> None:
    src = (
        "def k(x, T: tl.constexpr, U: tl.constexpr):\n"
        "    a = tl.arange(0, T)\n"
        "    b = tl.arange(0, U) if U > 0 else None\n"
    )
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    assert empty_range(func, {"T": 0, "U": 0}, {"T", "U"}) is not None
    assert empty_range(func, {"T": 4, "U": 0}, {"T", "U"}) is None


_INTERLEAVED = """
import triton
import triton.language as tl


@triton.jit
def magnitude(ri_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    re = tl.load(ri_ptr + offs * 2, mask=mask)
    im = tl.load(ri_ptr + offs * 2 + 1, mask=mask)
    tl.store(out_ptr + offs, tl.sqrt(re * re + im * im), mask={store_mask})
"""


def test_no_launch_interleaved_offsets_are_not_one_size() -> None:
    """With no launch in the file, `offs * 2` addresses a tensor of twice `n` elements (real
    and imaginary parts): `n` is not every tensor's length, so its reads are not judged
    (flag-gems' complex kernels, MB001)."""
    assert _bad(_INTERLEAVED.format(store_mask="mask")) == []


_ELEMENTWISE = """
import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + 1, mask={store_mask})
"""


def test_no_launch_elementwise_bug_still_found() -> None:
    text = _ELEMENTWISE.format(store_mask="offs <= n")
    assert ("MB002", _line_of(text, "tl.store(out_ptr")) in _bad(text)
    assert _bad(_ELEMENTWISE.format(store_mask="offs < n")) == []


_DIAGONAL = """
import torch
import triton
import triton.language as tl


@triton.jit
def to_diagonal(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < N
    tl.store(out_ptr + i * N + i, tl.load(x_ptr + i, mask=m, other=0.0), mask=m)


def diag(x):
    N = x.shape[0]
    out = torch.{alloc}((N, N), device=x.device, dtype=x.dtype)
    to_diagonal[(triton.cdiv(N, 16),)](x, out, N, BLOCK=16)
    return out
"""


def test_an_output_allocated_with_zeros_may_be_written_in_part() -> None:
    """`torch.zeros((N, N))` holds a value everywhere: writing only its diagonal is the design
    (flag-gems `diag`, `max`; GR001 L7)."""
    assert _bad(_DIAGONAL.format(alloc="zeros")) == []


def test_an_uninitialized_output_written_in_part_is_found() -> None:
    text = _DIAGONAL.format(alloc="empty")
    assert ("GR001", _line_of(text, "tl.store(out_ptr")) in _bad(text)


_TILE_STAND_IN = """
import torch
import triton
import triton.language as tl
from elsewhere import best_block


@triton.jit
def rows_by_head(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    head = tl.program_id(1)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
    tl.store(out_ptr + row * N + cols + head * 0, x, mask=m)


def copy_rows(x):
    R, N = x.shape
    out = torch.empty_like(x)
    rows_by_head[(R,)](x, out, N, BLOCK_N=best_block(N))
    return out
"""


def test_a_tile_size_stand_in_does_not_hide_a_missing_grid_axis() -> None:
    """`BLOCK_N` comes from a function outside the package (a stand-in), but the kernel reads
    `program_id(1)` of a one-axis grid whatever the tile: GR003 stays an error (liger's Ascend
    `mhc.py`, real). Only a stand-in flag the kernel branches on makes the probe a pick."""
    assert ("GR003", _line_of(_TILE_STAND_IN, "head = tl.program_id(1)")) in _bad(_TILE_STAND_IN)
