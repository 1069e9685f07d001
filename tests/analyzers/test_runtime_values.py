"""Values only the run knows (runtime_values.py): a count `.item()` reads back from the device
(flag-gems' unique launchers), a seed read from a generator's state (its random kernels). The
kernel is analyzed under a named pick instead of an AR001 stand-in; what the pick bounds is not
judged, a bug that does not depend on it still is. Also Cambricon's `libdevice.philox` and the
`r[:, 0]` indexing its callers use."""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_COUNTS = """
import torch
import triton
import triton.language as tl


@triton.jit
def count_kernel(data_ptr, idx_ptr, total_ptr, num_tasks, tile_size: tl.constexpr):
    r = tl.arange(0, tile_size)
    a = tl.load(data_ptr + r, mask=r < num_tasks, other=0)
    b = tl.load(data_ptr + r + 1, mask=r + 1 < num_tasks, other=0)
    ne = (a != b).to(tl.int64)
    tl.store(idx_ptr + r, tl.cumsum(ne, 0), mask=r < num_tasks)
    tl.store(total_ptr, tl.sum(ne, 0))


@triton.jit
def output_counts_kernel(idx_ptr, origin_num_tasks, counts_ptr, num_tasks, tile_size: tl.constexpr):
    r = tl.arange(0, tile_size)
    mask = r < num_tasks
    idx = tl.load(idx_ptr + r, mask=mask)
    idx_next = tl.load(idx_ptr + r + 1, mask=r + 1 < num_tasks)
    counts = tl.where(r + 1 < num_tasks, idx_next - idx, origin_num_tasks - idx)
    tl.store(counts_ptr + r, counts, mask=mask)
    {extra}


def unique_counts(sorted_data):
    num_tasks = sorted_data.numel()
    idx = torch.empty_like(sorted_data, dtype=torch.int64)
    total = torch.empty([1], dtype=torch.int64, device=sorted_data.device)
    count_kernel[(1,)](sorted_data, idx, total, num_tasks, tile_size=triton.next_power_of_2(num_tasks))
    out_size = {count}
    idx = idx[:out_size]
    counts = torch.empty_like(idx)
    flag = torch.empty([1], dtype=torch.int64, device=sorted_data.device)
    output_counts_kernel[(1,)](
        idx, num_tasks, counts, num_tasks=out_size, tile_size=triton.next_power_of_2(out_size)
    )
    return counts, flag
"""


def _counts(count: str = "total.item() + 1", extra: str = "") -> list:
    return check_source(_COUNTS.format(count=count, extra=extra), "unique_counts.py")


def _shown(findings: list) -> list:
    return [(f.kernel, f.code, f.severity, f.message) for f in findings]


def _of(findings: list, kernel: str) -> list:
    return [f for f in findings if f.kernel == kernel]


def test_a_count_read_back_from_the_device_is_no_ar001() -> None:
    for count in ("total.item() + 1", "total[-1].item()", "int(total.item())"):
        findings = _of(_counts(count), "output_counts_kernel")
        assert not [f for f in findings if f.code == "AR001"], (count, _shown(findings))
        assert not [f for f in findings if f.severity.fails_check], (count, _shown(findings))


def test_a_bug_that_does_not_rest_on_the_count_is_still_an_error() -> None:
    """Two lanes stored into the one-element `flag` at a fixed index: past it at either
    count, so the finding stands."""
    src = _COUNTS.replace("    {extra}\n", "    tl.store(total2_ptr + tl.arange(0, 2), tl.zeros([2], dtype=tl.int64))\n")
    src = src.replace("counts_ptr, num_tasks, tile_size", "counts_ptr, total2_ptr, num_tasks, tile_size")
    src = src.replace("idx, num_tasks, counts, num_tasks=", "idx, num_tasks, counts, flag, num_tasks=")
    findings = _of(check_source(src.format(count="total.item() + 1"), "unique_counts.py"), "output_counts_kernel")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    bad = [f for f in findings if f.code == "MB002" and "total2_ptr" in f.message]
    assert bad and bad[0].severity == Severity.ERROR, _shown(findings)


def test_a_count_the_launcher_computes_is_not_a_pick() -> None:
    """The control: a count the code does give (`num_tasks`) is no run-time value."""
    findings = _of(_counts("num_tasks"), "output_counts_kernel")
    assert not [f for f in findings if "before the run" in f.message], _shown(findings)


_SEEDED = """
import torch
import triton
import triton.language as tl


@triton.jit
def uniform(seed, philox_offset, offset):
    seed = seed.to(tl.int64)
    c0 = (philox_offset & 0xFFFFFFFF).to(tl.uint32)
    c1 = ((philox_offset >> 32) & 0xFFFFFFFF).to(tl.uint32)
    c2 = tl.full(offset.shape, 0, dtype=tl.uint32)
    r0, r1, r2, r3 = tl.philox(seed, c0 + offset.to(tl.uint32), c1, c2, c2)
    return tl.uint_to_uniform_float(r0), r1, r2, r3


@triton.jit
def search_kernel(cdf_ptr, out_ptr, K, N, philox_seed, philox_offset, NBLOCK: tl.constexpr = 128):
    n = tl.program_id(0) * NBLOCK + tl.arange(0, NBLOCK)
    rv, _, _, _ = uniform(philox_seed, philox_offset, n)
    start = tl.zeros((NBLOCK,), dtype=tl.int32)
    end = tl.zeros((NBLOCK,), dtype=tl.int32) + K - 1
    for _ in range(4):
        mid = start + (end - start) // 2
        x = tl.load(cdf_ptr + mid, mask=n < N)
        start = tl.where(x < rv, mid + 1, start)
        end = tl.where(x < rv, end, mid)
    tl.store(out_ptr + n, start, mask=n < N)


def seed_offset(increment, generator=None):
    if generator is None:
        generator = torch.cuda.default_generators[0]
    state = generator.get_state()
    c0, c1 = state.view(torch.int64)
    seed, offset = int(c0), int(c1)
    c1 += (increment + 3) // 4 * 4
    generator.set_state(state)
    return seed, offset


def sample(cdf, n_samples):
    out = torch.empty((n_samples,), device=cdf.device, dtype=torch.int64)
    philox_seed, philox_offset = seed_offset(n_samples)
    grid = lambda META: (triton.cdiv(n_samples, META["NBLOCK"]),)
    search_kernel[grid](cdf, out, cdf.size(-1), n_samples, philox_seed, philox_offset)
    return out
"""


def test_a_seed_from_the_generator_state_that_steers_is_no_ar001() -> None:
    findings = _of(check_source(_SEEDED, "sample.py"), "search_kernel")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert not [f for f in findings if f.severity.fails_check and f.code != "MB003"], _shown(findings)


_MLU = """
import torch
import triton
import triton.language as tl
from triton.language.extra.mlu.libdevice import philox as _philox


@triton.jit
def rand_kernel(out_ptr, col_ptr, N, philox_seed, philox_offset, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    sl = (philox_seed & 0xFFFFFFFF).to(tl.uint32)
    sh = ((philox_seed >> 32) & 0xFFFFFFFF).to(tl.uint32)
    c0 = (philox_offset & 0xFFFFFFFF).to(tl.uint32)
    c1 = ((philox_offset >> 32) & 0xFFFFFFFF).to(tl.uint32)
    r = _philox(BLOCK, sl, sh, c0 + pid * BLOCK, c1, 0, 0, 10)
    r = tl.uint_to_uniform_float(r)
    off = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(col_ptr + off, r[:, 0])
    off4 = pid * 4 * BLOCK + tl.arange(0, 4 * BLOCK)
    tl.store(out_ptr + off4, tl.reshape(r, [4 * BLOCK], can_reorder=True), mask=off4 < N)


def rand(n, seed, offset):
    out = torch.empty((n,), device="cuda", dtype=torch.float32)
    col = torch.empty(({cols},), device="cuda", dtype=torch.float32)
    rand_kernel[(triton.cdiv(n, 4 * 64),)](out, col, n, seed, offset, BLOCK=64)
    return out
"""


def test_cambricon_philox_is_a_block_of_four_draws_per_row() -> None:
    findings = check_source(_MLU.format(cols="triton.cdiv(n, 4 * 64) * 64"), "rand.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert not [f for f in findings if f.severity.fails_check], _shown(findings)


def test_a_column_of_the_draws_stored_past_its_tensor_is_found() -> None:
    """One column per program: a tensor of `n // 4` is too short for a ragged `n`."""
    findings = check_source(_MLU.format(cols="n // 4"), "rand.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert [f for f in findings if f.code == "MB002" and f.severity == Severity.ERROR], _shown(findings)


_RADIX = """
import torch
import triton
import triton.language as tl


@triton.jit
def hist_kernel(arr_ptr, out_ptr, num_passes, m, n, TILE_N: tl.constexpr, k_bits: tl.constexpr):
    pid = tl.program_id(0)
    r: tl.constexpr = 2**k_bits
    offs = tl.arange(0, TILE_N)
    x = tl.load(arr_ptr + pid * n + offs, mask=offs < n, other=0).to(tl.uint32)
    bins = tl.arange(0, r)
    for p in range(0, num_passes):
        digit = (x >> (p * k_bits)) & (r - 1)
        hit = (digit[:, None] == bins[None, :]) & (offs < n)[:, None]
        count = tl.sum(hit.to(tl.int32), axis=0)
        tl.store(out_ptr + pid * {stride} + p * r + bins, count)


def radix_hist(arr, k_bits=4):
    m, n = arr.shape
    num_bits = 1 if arr.dtype == torch.bool else arr.itemsize * 8
    n_passes = triton.cdiv(num_bits, k_bits)
    hist = torch.zeros((m, n_passes, 2**k_bits), device=arr.device, dtype=torch.int32)
    hist_kernel[(m,)](arr, hist, n_passes, m, n, TILE_N=triton.next_power_of_2(n), k_bits=k_bits)
    return hist
"""


def test_the_callers_itemsize_is_a_named_pick() -> None:
    """`num_bits = arr.itemsize * 8` of a dtype the caller chooses: 4 bytes, then 2 (eight
    passes of 4 bits, then four), so the kernel is judged without an AR001."""
    findings = check_source(_RADIX.format(stride="num_passes * r"), "radix.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert not [f for f in findings if f.severity.fails_check and f.code != "MB003"], _shown(findings)


def test_a_row_stride_right_for_one_itemsize_only_is_a_hint_naming_it() -> None:
    """A row stride of eight passes: right for 4 bytes, past the histogram for 2."""
    findings = check_source(_RADIX.format(stride="r * 8"), "radix.py")
    bad = [f for f in findings if f.code == "MB002"]
    assert bad and all(f.severity == Severity.HINT for f in bad), _shown(findings)
    assert "`arr.itemsize` (the caller's dtype, not stated) = 2" in bad[0].message


def test_a_row_stride_wrong_for_every_itemsize_is_an_error() -> None:
    findings = check_source(_RADIX.format(stride="r * 16"), "radix.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert [f for f in findings if f.code == "MB002" and f.severity == Severity.ERROR], _shown(findings)


_SLICED = """
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, M, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < M), mask=offs < M)


def copy_unique(data, total):
    sorted_data, _ = torch.sort(data)
    uniq = sorted_data[: total.item()]
    M = uniq.numel()
    out = torch.empty_like(uniq)
    copy_kernel[(triton.cdiv(M, 128),)](uniq, out, M, BLOCK=128)
    return out
"""


def test_a_tensor_sliced_by_a_count_the_run_decides_has_a_size_of_its_own() -> None:
    """`sorted_data[: total.item()]`: an extent of its own class, so `M = uniq.numel()` is a size
    the probes choose rather than an unknown stand-in."""
    findings = check_source(_SLICED, "copy_unique.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert not [f for f in findings if f.severity.fails_check and f.code != "MB003"], _shown(findings)


_QUOTIENT = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, rows, MN, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < rows * MN), mask=offs < rows * MN)


def lower(x, groups):
    M, N = x.shape[-2:]
    batch = int(torch.numel(x) / groups.item())
    y = torch.empty_like(x)
    rows_kernel[(triton.cdiv(batch * M * N, 128),)](x, y, batch, M * N, BLOCK=128)
"""


def test_a_quotient_by_a_count_read_back_is_a_pick_not_a_note() -> None:
    """`int(numel / groups.item())`: the run's value carried through `/` and `int`, so the
    size is a named pick; the tensors it bounds are not judged (no error at any pick)."""
    findings = check_source(_QUOTIENT, "lower.py")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert not [f for f in findings if f.severity.fails_check], _shown(findings)
