"""Launch values the code does not establish are picked by the probe and named, never guessed
into an error (issue 12, item 3).

Two launcher constructs stand behind many AR001 notes on real packages:
- a grid axis from a device property (`multi_processor_count`, an NPU core count,
  `min(num_sms, tiles)`): the kernel is bound from its launch, the axis launches a stand-in
  number of programs, coverage is not judged, and a finding the probe sees is a hint naming
  the pick;
- a constexpr that an autotune decorator (`triton.autotune`, flag-gems' `libtuner`) supplies
  from configs the checker cannot read (a yaml the package ships): the probe picks a value,
  and again findings resting on it are hints. Configs it can read are used as they are.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
from flag_gems import runtime
from flag_gems.utils import libentry, libtuner
"""

_ROWS = """
@triton.jit
def rows_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for row in range(pid, n_rows, tl.num_programs(0)):
        v = tl.load(x_ptr + row * n_cols + cols, mask={mask})
        tl.store(y_ptr + row * n_cols + cols, v, mask=cols < n_cols)


def rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    rows_kernel[{grid}](x, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
"""

_TUNED = """
{decorator}
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask={mask})
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


def scale(x):
    n = x.numel()
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    scale_kernel[grid](x, y, n)
    return y
"""

_YAML_TUNED = '@triton.autotune(configs=runtime.get_tuned_config("scale"), key=["n"])'


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def test_a_device_property_grid_is_bound_and_named_not_an_ar001() -> None:
    for grid in ("(sms,)", "(min(sms, n_rows),)"):
        findings = check_source(_HEADER + _ROWS.format(mask="cols < n_cols", grid=grid), "rows.py")
        assert not _notes(findings), (grid, _notes(findings))
        assert not _failing(findings), grid


def test_a_bug_under_a_picked_grid_is_a_hint_that_names_the_pick() -> None:
    findings = check_source(_HEADER + _ROWS.format(mask="None", grid="(sms,)"), "rows.py")
    assert not _notes(findings)
    oob = [f for f in findings if f.code == "MB001"]
    assert oob, [f.code for f in findings]
    assert all(f.severity == Severity.HINT for f in oob)
    assert "multi_processor_count" in oob[0].message and "programs" in oob[0].message
    assert oob[0].witness and "grid axis 0" in oob[0].witness["choice"]


def test_a_constexpr_from_unreadable_autotune_configs_is_picked_and_named() -> None:
    findings = check_source(_HEADER + _TUNED.format(decorator=_YAML_TUNED, mask="offs < n"), "tuned.py")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings)
    # an unmasked read past the end fails under both picks (32, then 16): it does not rest on them
    buggy = check_source(_HEADER + _TUNED.format(decorator=_YAML_TUNED, mask="None"), "tuned.py")
    oob = [f for f in buggy if f.code == "MB001"]
    assert oob and oob[0].severity == Severity.ERROR, [(f.code, f.severity) for f in buggy]


_FIXED_TABLE = """
@triton.autotune(configs=runtime.get_tuned_config("lut"), key=["n"])
@triton.jit
def lut_kernel(x_ptr, lut_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t = tl.load(lut_ptr + tl.arange(0, BLOCK))
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * t, mask=offs < n)


def lut(x):
    n = x.numel()
    table = torch.ones(24, device=x.device)
    y = torch.empty_like(x)
    lut_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, table, y, n)
    return y
"""


def test_a_finding_only_one_pick_shows_is_a_hint_that_names_it() -> None:
    """A 24-entry table read whole by a BLOCK-wide arange: past the end with BLOCK=32, in
    bounds with 16. Which BLOCK the tuner takes is not in the code: a hint naming the pick."""
    findings = check_source(_HEADER + _FIXED_TABLE, "lut.py")
    assert not _notes(findings), _notes(findings)
    oob = [f for f in findings if f.code == "MB001"]
    assert oob and all(f.severity == Severity.HINT for f in oob), [(f.code, f.severity) for f in findings]
    assert "`BLOCK` (autotune configs not readable) = 32" in oob[0].message
    assert oob[0].witness and "= 32" in oob[0].witness["choice"]


def test_libtuner_configs_written_out_are_read_like_autotune_ones() -> None:
    deco = '@libentry()\n@libtuner(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"], strategy=["log"])'
    findings = check_source(_HEADER + _TUNED.format(decorator=deco, mask="None"), "libtuner.py")
    assert not _notes(findings), _notes(findings)
    oob = [f for f in findings if f.code == "MB001"]
    # a config the code states is no pick: the bug is an error, seen under BLOCK=64
    assert oob and oob[0].severity == Severity.ERROR
    assert oob[0].witness and "BLOCK=64" in oob[0].witness.get("config", "")


def test_an_unknown_block_passed_to_the_kernel_sizes_the_grid_alike() -> None:
    """`cdiv(n, B)` with `B` unknown and passed as `BLOCK`: the grid is the one the launch makes
    with the probe's `BLOCK`, so no program runs past the end and none is missing."""
    src = _HEADER + (
        _TUNED.format(decorator="", mask="offs < n")
        .replace('    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)\n', "")
        .replace(
            "scale_kernel[grid](x, y, n)",
            "B = runtime.pick_block(n)\n    scale_kernel[(triton.cdiv(n, B),)](x, y, n, BLOCK=B)",
        )
    )
    findings = check_source(src, "shared.py")
    assert not [m for m in _notes(findings) if "grid" in m], _notes(findings)
    assert not _failing(findings)


_ROW_PER_PROGRAM = """
@triton.jit
def row_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    w = tl.load(w_ptr + cols{mask})
    ok = (cols < n_cols) & (row < n_rows)
    v = tl.load(x_ptr + row * n_cols + cols, mask=ok)
    tl.store(y_ptr + row * n_cols + cols, v * w, mask=ok)


def run(x, w):
    n_rows, n_cols = x.shape
    assert w.shape == (n_cols,)
    y = torch.empty_like(x)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    row_kernel[(sms,)](x, w, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
"""


def test_what_the_first_program_sees_does_not_rest_on_the_grid_pick() -> None:
    """Program 0 runs under any grid: an unmasked read past the end of `w` is an error whatever
    the device's count, as long as the kernel does not read the count itself."""
    findings = check_source(_HEADER + _ROW_PER_PROGRAM.format(mask=""), "row.py")
    oob = [f for f in findings if f.code == "MB001"]
    assert oob and oob[0].severity == Severity.ERROR, [(f.code, f.severity, f.message) for f in findings]
    assert oob[0].witness and oob[0].witness.get("pid") in (0, [0])
    assert "choice" not in oob[0].witness
    clean = check_source(_HEADER + _ROW_PER_PROGRAM.format(mask=", mask=cols < n_cols"), "row.py")
    assert not _failing(clean) and not _notes(clean)


_MODULE_FLAG = """
from fla.utils import is_gather_supported

IS_GATHER_SUPPORTED = is_gather_supported()


@triton.jit
def gather_kernel(x_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_GATHER: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    if USE_GATHER:
        v = tl.load(x_ptr + offs, mask=m)
    else:
        v = tl.load(x_ptr + offs{fallback_mask})
    tl.store(y_ptr + offs, v, mask=m)


def gather(x, idx):
    n = x.numel()
    y = torch.empty_like(x)
    gather_kernel[(triton.cdiv(n, 128),)](x, idx, y, n, BLOCK=128, USE_GATHER=IS_GATHER_SUPPORTED)
    return y
"""


def test_a_module_flag_computed_at_import_runs_both_branches() -> None:
    """`IS_GATHER_SUPPORTED` depends on the machine: both branches are launches some machine
    makes, so both are checked; a bug in one of them is a hint naming the flag's value."""
    clean = check_source(_HEADER + _MODULE_FLAG.format(fallback_mask=", mask=m"), "flag.py")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean)
    buggy = check_source(_HEADER + _MODULE_FLAG.format(fallback_mask=""), "flag.py")
    assert not _notes(buggy), _notes(buggy)
    oob = [f for f in buggy if f.code == "MB001"]
    assert oob and all(f.severity == Severity.HINT for f in oob), [(f.code, f.severity) for f in buggy]
    assert "`USE_GATHER` (a flag the code does not fix) = False" in oob[0].message


_DELETED_AXIS = """
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, C, D, BLOCK_D: tl.constexpr):
    pid_d = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    m = offs < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for c in range(0, C):
        acc += tl.load(x_ptr + pid_n * C * D + c * D + offs, mask=m, other=0.0)
    tl.store(out_ptr + pid_n * D + offs, acc, mask=m)


def rowsum(x):
    N, C, D = x.shape
    shape = [N, C, D]
    {delete}
    out = torch.empty(shape, dtype=torch.float32, device=x.device)
    rowsum_kernel[(triton.cdiv(D, 32), N)](x, out, C, D, BLOCK_D=32)
    return out
"""


def test_an_axis_deleted_from_a_shape_list_is_gone_from_the_output() -> None:
    """flag-gems' cross-entropy builds its output's shape with `del shape[axis]`; kept, the
    output was one dimension too large and reported as never written (GR001)."""
    findings = check_source(_HEADER + _DELETED_AXIS.format(delete="del shape[1]"), "rowsum.py")
    assert not _failing(findings), [(f.code, f.message) for f in _failing(findings)]
    unknown = check_source(_HEADER + _DELETED_AXIS.format(delete="del shape[C]"), "rowsum.py")
    assert not [f for f in unknown if f.code == "GR001" and f.severity == Severity.ERROR]
