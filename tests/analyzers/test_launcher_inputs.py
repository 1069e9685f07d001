"""Launcher values the evaluator cannot compute, where the user's call or the running program
decides them (issue 12, item 3): the probes pick a valid value, name it, and vary it in a
second probe, instead of an AR001 stand-in.

- an axis argument (`dim` list or int), a `normalized_shape`, a `size` the launcher allocates
  from, a sequence it unpacks (`OH, OW = output_size`): model/binder_inputs.py;
- `functools.reduce(operator.mul, shape, 1)` over known sizes: model/host_loops.py;
- a runtime scalar the kernel computes only data from (a random generator's seed, a fill
  value from `.item()`): model/data_params.py; one that steers an address stays an AR001;
- constexprs from `@triton.heuristics(runtime.get_heuristic_config(...))`: picked like
  unreadable autotune configs.
Each correct kernel gets no AR001 and no error; each seeded bug is still an error.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import functools
import operator
import torch
import triton
import triton.language as tl
from flag_gems import runtime
from flag_gems.utils.random_utils import philox_backend_seed_offset
"""

_DIM_REDUCE = """
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        x = tl.load(x_ptr + row * N + start + cols, mask={mask}, other=0.0)
        acc += x
    tl.store(out_ptr + row, tl.sum(acc, 0))


def row_sum(x, dim=None, keepdim=False):
    B, L = x.shape
    shape = list(x.shape)
    dim = [d % x.ndim for d in dim]
    x = x.contiguous()
    N = 1
    for i in dim:
        N *= shape[i]
        shape[i] = 1
    M = x.numel() // N
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    row_sum_kernel[(M,)](x, out, M, N, BLOCK_N=64)
    return out
"""

_NORM = """
@triton.jit
def rms_kernel(y_ptr, x_ptr, w_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = {mask}
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0)
    r = tl.rsqrt(tl.sum(x * x, 0) / N + eps)
    tl.store(y_ptr + row * N + cols, x * r * w, mask=cols < N)


def rms_norm(x, normalized_shape, weight, eps=1e-5):
    rows, cols = x.shape
    dim = x.ndim - len(normalized_shape)
    M = functools.reduce(operator.mul, x.shape[:dim], 1)
    N = functools.reduce(operator.mul, normalized_shape, 1)
    x = x.contiguous()
    y = torch.empty_like(x)
    rms_kernel[(M,)](y, x, weight, N, eps, BLOCK=triton.next_power_of_2(N))
    return y
"""

_FILL = """
@triton.jit
def fill_kernel(out_ptr, n, seed, offset, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.rand(seed, offset + offs)
    v = tl.full((BLOCK,), value, tl.float32) * r
    tl.store(out_ptr + offs, v, mask={mask})


def fill(size, value, *, device=None):
    out = torch.empty(size, device=device, dtype=torch.float32)
    n = functools.reduce(operator.mul, size, 1)
    seed, offset = philox_backend_seed_offset(n)
    fill_kernel[(triton.cdiv(n, 256),)](out, n, seed, offset, value.item(), BLOCK=256)
    return out
"""

_UPSAMPLE = """
@triton.jit
def up_kernel(out_ptr, in_ptr, OH, OW, IH, IW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    oh = offs // OW
    ow = offs % OW
    ih = oh * IH // OH
    iw = ow * IW // OW
    v = tl.load(in_ptr + ih * IW + iw, mask={mask})
    tl.store(out_ptr + offs, v, mask=offs < OH * OW)


def upsample(inp, output_size):
    OH, OW = output_size
    IH, IW = inp.shape
    out = torch.empty((OH, OW), device=inp.device, dtype=inp.dtype)
    up_kernel[(triton.cdiv(OH * OW, 128),)](out, inp, OH, OW, IH, IW, BLOCK=128)
    return out
"""

_STEERING = """
@triton.jit
def shift_kernel(x_ptr, y_ptr, n, start, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < start)
    tl.store(y_ptr + offs, x, mask=offs < start)


def shift(x, y, where):
    n = y.numel()
    shift_kernel[(triton.cdiv(n, 128),)](x, y, n, {start}, BLOCK=128)
"""

_HEURISTIC = """
@triton.heuristics(runtime.get_heuristic_config("scale"))
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask={mask})
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


def scale(x):
    n = x.numel()
    y = torch.empty_like(x)
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
"""


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _errors(findings: list) -> list[tuple[str, int, str]]:
    return [(f.code, f.span.start_point[0], f.message) for f in findings if f.severity == Severity.ERROR]


def _check(template: str, mask: str, name: str) -> list:
    return check_source(_HEADER + template.format(mask=mask), name)


def test_a_dim_list_is_picked_and_every_size_computed_from_it() -> None:
    """`for i in dim: N *= shape[i]`, `M = x.numel() // N`: the probe picks the last axis
    (`[-1]`, the second probe the first), so M and N are known and `M * N` is the numel."""
    ok = _check(_DIM_REDUCE, "(start + cols) < N", "rowsum.py")
    assert not _notes(ok), _notes(ok)
    assert not _errors(ok), _errors(ok)
    bad = _check(_DIM_REDUCE, "None", "rowsum_bad.py")
    assert not _notes(bad), _notes(bad)
    assert any(e[0] in ("MB001", "MB002") for e in _errors(bad)), [
        (f.code, f.severity, f.message) for f in bad
    ]


def test_normalized_shape_is_the_trailing_extent_and_reduce_folds_sizes() -> None:
    ok = _check(_NORM, "cols < N", "rms.py")
    assert not _notes(ok), _notes(ok)
    assert not _errors(ok), _errors(ok)
    bad = _check(_NORM, "cols < N + 1", "rms_bad.py")
    assert any(e[0] in ("MB001", "MB002") for e in _errors(bad)), [
        (f.code, f.severity, f.message) for f in bad
    ]


def test_a_size_list_a_generator_state_and_an_item_are_picked_not_stand_ins() -> None:
    """`torch.empty(size)`: one extent (two in the second probe); the seed, offset and fill
    value feed only data (`tl.rand`, `tl.full`'s value), so a pick stands for each."""
    ok = _check(_FILL, "offs < n", "fill.py")
    assert not _notes(ok), _notes(ok)
    assert not _errors(ok), _errors(ok)
    bad = _check(_FILL, "offs < n + 7", "fill_bad.py")
    assert any(e[0] in ("MB001", "MB002") for e in _errors(bad)), [
        (f.code, f.severity, f.message) for f in bad
    ]


def test_an_unpacked_sequence_argument_gives_that_many_sizes() -> None:
    ok = _check(_UPSAMPLE, "offs < OH * OW", "up.py")
    assert not _notes(ok), _notes(ok)
    assert not _errors(ok), _errors(ok)
    bad = _check(_UPSAMPLE, "None", "up_bad.py")
    assert any(e[0] in ("MB001", "MB002") for e in _errors(bad)), [
        (f.code, f.severity, f.message) for f in bad
    ]


def test_an_unknown_scalar_that_steers_an_address_stays_an_ar001() -> None:
    start = "torch.cuda.get_device_properties(x.device).multi_processor_count"
    findings = check_source(_HEADER + _STEERING.format(start=start), "shift.py")
    notes = _notes(findings)
    assert any("`start`" in n and "probes use 3" in n for n in notes), notes


def test_a_count_read_back_that_steers_an_address_is_a_named_pick() -> None:
    """`where.item()`: a value only the run knows (runtime_values.py), a pick named in the
    findings' sizes rather than an AR001; the bounds it steers are not judged."""
    findings = check_source(_HEADER + _STEERING.format(start="where.item()"), "shift.py")
    assert not _notes(findings), _notes(findings)
    assert not _errors(findings), _errors(findings)


def test_heuristics_from_a_runtime_table_are_picked_like_unreadable_configs() -> None:
    ok = _check(_HEURISTIC, "offs < n", "heur.py")
    assert not _notes(ok), _notes(ok)
    assert not _errors(ok), _errors(ok)
    bad = _check(_HEURISTIC, "None", "heur_bad.py")
    found = [f for f in bad if f.code == "MB001"]
    assert found, [(f.code, f.severity, f.message) for f in bad]
    assert "(heuristics not readable)" in found[0].message or found[0].severity == Severity.ERROR


_FLAGGED = """
@triton.heuristics(runtime.get_heuristic_config("copy"))
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, m, BLOCK: tl.constexpr, SAME: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if SAME:
        src = offs
    else:
        src = offs % m
    x = tl.load(x_ptr + src, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)


def copy(x, n):
    m = x.numel()
    y = torch.empty((n,), device=x.device, dtype=x.dtype)
    copy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, m)
    return y
"""


def test_a_flag_from_an_unreadable_heuristic_is_flipped_in_the_second_probe() -> None:
    """`SAME` comes from a table (`SAME = n == m`, say): reading `x` at `offs` overruns it when
    the flag is true and `n > m`, which only the first probe's pick shows: a hint naming it."""
    findings = check_source(_HEADER + _FLAGGED, "flagged.py")
    assert not _notes(findings), _notes(findings)
    oob = [f for f in findings if f.code == "MB001"]
    assert oob and all(f.severity == Severity.HINT for f in oob), [(f.code, f.severity) for f in findings]
    assert "`SAME` (heuristics not readable) = True" in oob[0].message


# ---- a caller's key into a module table (liger's `_str_to_reduction_mode[reduction]`) --------

_MODE_TABLE = """
import torch
import triton
import triton.language as tl

_NONE = tl.constexpr(0)
_SUM = tl.constexpr(1)
_MODES = {{"none": _NONE.value, "sum": _SUM.value}}


@triton.jit
def loss_kernel(x_ptr, loss_ptr, n_cols, BLOCK: tl.constexpr, reduction: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    if reduction == _NONE:
        tl.store(loss_ptr + row * n_cols + cols, x, mask=cols < {bound})
    else:
        tl.store(loss_ptr + row, tl.sum(x, axis=0))


def loss_forward(x, reduction):
    BT, V = x.shape
    mode = _MODES[reduction]
    out_size = (BT, V) if mode == _NONE.value else (BT,)
    loss = torch.zeros(out_size, device=x.device, dtype=torch.float32)
    loss_kernel[(BT,)](x, loss, V, BLOCK=triton.next_power_of_2(V), reduction=mode)
    return loss
"""


def test_a_callers_key_into_a_module_table_is_picked_and_named() -> None:
    findings = check_source(_MODE_TABLE.format(bound="n_cols"), "loss.py")
    assert not [f.message for f in findings if f.code == "AR001"], [f.message for f in findings]
    assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_a_bug_on_the_path_of_one_tables_key_is_found_naming_the_key() -> None:
    findings = check_source(_MODE_TABLE.format(bound="n_cols + 1"), "loss.py")
    mb = [f for f in findings if f.code == "MB002"]
    assert mb, [(f.code, f.message) for f in findings]
    assert "`reduction` (the caller's key of `_MODES`) = 'none'" in mb[0].message, mb[0].message
