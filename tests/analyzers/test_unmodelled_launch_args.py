"""Launch arguments the host evaluator cannot follow no longer turn the whole launch into a
fallback (issue 12, items 2-3).

- A tensor argument computed by code the checker does not model (`idx =
  prepare_indices(x)` of another library) is an unsized stand-in: its own bounds, coverage
  and races are not judged, and everything else the launch establishes still is (the other
  tensors' bounds, the output's coverage). Before, the kernel was checked as if it had no
  launch site, with an AR001 "the tensor passed as `idx_ptr` ... is not modelled".
- A tile size a package helper returns from device properties (`get_block_size(n)` reading
  `torch.cuda.get_device_properties`) is a pick: named, probed twice (32, then 16), and a
  finding only one pick shows is a hint; before, a stand-in 4 and an AR001 note.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
from other_library import prepare_indices
"""

_GATHER = """
@triton.jit
def gather_kernel(x_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    v = tl.load(x_ptr + offs, mask={mask})
    tl.store(y_ptr + offs, v + i, mask=m)


def gather(x):
    n = x.numel()
    idx = prepare_indices(x)
    y = torch.empty_like(x)
    gather_kernel[(triton.cdiv(n, {per_program}),)](x, idx, y, n, BLOCK=128)
    return y
"""


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def test_an_unmodelled_tensor_argument_leaves_the_rest_of_the_launch_judged() -> None:
    clean = check_source(_HEADER + _GATHER.format(mask="m", per_program=128), "gather.py")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    # a read of x past its end: x's extent is established, so the bug is an error
    oob = check_source(_HEADER + _GATHER.format(mask="None", per_program=128), "gather.py")
    assert not _notes(oob), _notes(oob)
    mb = [f for f in oob if f.code == "MB001"]
    assert mb and mb[0].severity == Severity.ERROR and "`x_ptr`" in mb[0].message, [
        (f.code, f.message) for f in oob
    ]
    # a grid of half the programs leaves y partly unwritten: coverage is judged on y
    short = check_source(_HEADER + _GATHER.format(mask="m", per_program=256), "gather.py")
    assert [f for f in short if f.code == "GR001" and "y" in f.message], [(f.code, f.message) for f in short]


def test_the_unsized_stand_ins_own_bounds_are_not_judged() -> None:
    """Reads of `idx` past `n`: idx's length is not in the code, so nothing is reported on it."""
    src = _HEADER + _GATHER.format(mask="m", per_program=128).replace(
        "tl.load(idx_ptr + offs, mask=m, other=0)", "tl.load(idx_ptr + offs + n)"
    )
    findings = check_source(src, "gather.py")
    assert not [f for f in _failing(findings) if "idx_ptr" in f.message], [
        (f.code, f.message) for f in findings
    ]
    assert not _notes(findings)


def test_an_argument_the_call_omits_is_still_not_modelled() -> None:
    src = _HEADER + _GATHER.format(mask="m", per_program=128).replace("(x, idx, y, n,", "(x, y=y, n=n,")
    notes = _notes(check_source(src, "gather.py"))
    assert any("idx_ptr" in m and "missing argument" in m for m in notes), notes


_HELPER_BLOCK = """
def get_block_size(n):
    # as many fp32 rows of n as the device's shared memory holds
    smem = torch.cuda.get_device_properties(0).shared_memory_per_block
    return triton.next_power_of_2(smem // (4 * n))


@triton.jit
def scale_kernel(x_ptr, t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t = tl.load(t_ptr + tl.arange(0, BLOCK){table_mask})
    x = tl.load(x_ptr + offs, mask={mask})
    tl.store(y_ptr + offs, x * t, mask=offs < n)


def scale(x):
    n = x.numel()
    table = torch.ones(24, device=x.device)
    y = torch.empty_like(x)
    BLOCK = get_block_size(n)
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, table, y, n, BLOCK=BLOCK)
    return y
"""


def test_a_helpers_device_dependent_tile_size_is_a_named_pick() -> None:
    src = _HEADER + _HELPER_BLOCK.format(table_mask=", mask=tl.arange(0, BLOCK) < 24", mask="offs < n")
    findings = check_source(src, "scale.py")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]


def test_a_bug_under_both_picks_is_an_error() -> None:
    src = _HEADER + _HELPER_BLOCK.format(table_mask=", mask=tl.arange(0, BLOCK) < 24", mask="None")
    findings = check_source(src, "scale.py")
    mb = [f for f in findings if f.code == "MB001" and "x_ptr" in f.message]
    assert mb and mb[0].severity == Severity.ERROR, [(f.code, f.severity, f.message) for f in findings]


def test_a_finding_only_one_pick_shows_is_a_hint_naming_the_helper() -> None:
    """The 24-entry table read whole: past its end with BLOCK=32, inside it with 16."""
    src = _HEADER + _HELPER_BLOCK.format(table_mask="", mask="offs < n")
    findings = check_source(src, "scale.py")
    mb = [f for f in findings if f.code == "MB001"]
    assert mb and all(f.severity == Severity.HINT for f in mb), [
        (f.code, f.severity, f.message) for f in findings
    ]
    assert "`BLOCK` (returned by `get_block_size`, not computable here) = 32" in mb[0].message


_TUNED_FLAG = """
from flag_gems import runtime


@triton.autotune(configs=runtime.get_tuned_config("scale"), key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


def scale(x):
    n = x.numel()
    y = torch.empty_like(x)
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
"""


def test_a_flag_from_unreadable_configs_is_picked_true_then_false() -> None:
    """`EVEN` comes from configs the checker cannot read (a tuner sets it where `n % BLOCK ==
    0`): probed True, then False. The unmasked read under `if EVEN:` rests on the pick: a hint
    naming it, not an error (a count pick of 4 then 2 took the flag true in both probes)."""
    findings = check_source(_HEADER + _TUNED_FLAG, "tuned_flag.py")
    mb = [f for f in findings if f.code == "MB001"]
    assert mb and all(f.severity == Severity.HINT for f in mb), [
        (f.code, f.severity, f.message) for f in findings
    ]
    assert "`EVEN` (autotune configs not readable) = True" in mb[0].message


_GUARDED = """
import math


@triton.jit
def fht128_kernel(x_ptr, y_ptr, rows, DIM: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, 128)
    v = tl.load(x_ptr + row * DIM + offs)
    tl.store(y_ptr + row * DIM + offs, v)


def fht(x):
    rows, d = x.shape
    log_n = math.ceil(math.log2(max(d, 2)))
    y = torch.empty_like(x)
    if log_n == 7:
        fht128_kernel[(rows,)](x, y, rows, DIM=d)
    return y
"""


def test_a_launch_guard_the_probe_contradicts_refuses_the_probe() -> None:
    """The kernel reads 128 columns and is launched only where `log_n == 7` (d in 65..128); a
    probe with another d is a launch no call makes: refused, never an out-of-bounds error."""
    findings = check_source(_HEADER + _GUARDED, "guarded.py")
    assert not _failing(findings), [(f.code, f.message) for f in findings]
    assert any("`if log_n == 7:` that the launch is under" in m for m in _notes(findings)), _notes(findings)


_SHARED_STRIDES = """
@triton.jit
def copy_rows(x_ptr, y_ptr, n_rows, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x_ptr + row * stride_row + cols, mask=m)
    tl.store(y_ptr + row * stride_row + cols, v, mask=m)


def copy(x):
    {check}
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    copy_rows[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return y
"""


def test_a_layout_the_launcher_asserts_contiguous_is_not_padded() -> None:
    """`y` (a fresh, contiguous tensor) addressed with `x`'s row stride: right only because the
    launcher asserts `x` contiguous. Without the assert, a padded `x` is a launch the code
    accepts, and the store past `y`'s rows is an error."""
    ok = check_source(_HEADER + _SHARED_STRIDES.format(check="assert x.is_contiguous()"), "copy.py")
    assert not _failing(ok), [(f.code, f.message) for f in ok]
    bad = check_source(_HEADER + _SHARED_STRIDES.format(check="pass"), "copy.py")
    assert [f for f in bad if f.code == "MB002" and "y_ptr" in f.message], [(f.code, f.message) for f in bad]


_BRANCHY = """
def calculate_settings(n):
    if n.bit_count() > 2:
        return 128, 4
    return triton.next_power_of_2(n), 4


def pick_or_refuse(n):
    if n.bit_count() > 2:
        raise NotImplementedError
    return triton.next_power_of_2(n), 4


@triton.jit
def rows_kernel(x_ptr, t_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + cols)
    v = tl.load(x_ptr + row * D + cols, mask=cols < D)
    tl.store(y_ptr + row * D + cols, v * t, mask=cols < D)


def launch(x):
    T, D = x.shape
    table = torch.ones(24, device=x.device)
    y = torch.empty_like(x)
    BLOCK, warps = {helper}(D)
    rows_kernel[(T,)](x, table, y, D, BLOCK=BLOCK, num_warps=warps)
    return y
"""


def test_a_helper_value_under_an_undecided_test_is_a_named_pick_unless_it_may_raise() -> None:
    """Every side of `calculate_settings`' test returns a block: some value comes back, which
    one the code does not say: picked (32, 16) and named; the 24-entry table read whole by a
    BLOCK-wide arange fails only under 32, a hint. A helper that may raise instead gives no
    value: the stand-in and its AR001 note."""
    picked = check_source(_HEADER + _BRANCHY.format(helper="calculate_settings"), "rows.py")
    assert not _notes(picked), _notes(picked)
    mb = [f for f in picked if f.code == "MB001"]
    assert mb and all(f.severity == Severity.HINT for f in mb), [(f.code, f.severity) for f in picked]
    assert "`BLOCK` (returned by `calculate_settings`, not computable here)" in mb[0].message
    refused = check_source(_HEADER + _BRANCHY.format(helper="pick_or_refuse"), "rows.py")
    assert any("BLOCK" in m and "pick_or_refuse" in m for m in _notes(refused)), _notes(refused)
