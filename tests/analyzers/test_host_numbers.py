"""Numbers a launcher computes from sizes and dtypes (model/host_numbers.py): `int(a / b / c)`
of sizes and `torch.numel(x)`, and `torch.finfo(dtype)` / `torch.iinfo(dtype)` limits, alone
or inside a module table keyed by dtype.

Each idiom: the value is computed (no AR001 "the value of ... is not known without running
the launcher"), a seeded bug that rests on it is found, and a value the code does not
establish stays unknown (a stand-in with its note, never a guess).
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
"""

_BATCHED = """
@triton.jit
def batched_kernel(x_ptr, y_ptr, batch, MN, BLOCK_B: tl.constexpr, BLOCK_MN: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)[:, None]
    cols = tl.arange(0, BLOCK_MN)[None, :]
    mask = {mask}
    v = tl.load(x_ptr + rows * MN + cols, mask=mask)
    tl.store(y_ptr + rows * MN + cols, v, mask=mask)
"""


def _value_notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001" and "without running the launcher" in f.message]


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _errors(findings: list, *codes: str) -> list:
    return [f for f in findings if f.code in codes and f.severity == Severity.ERROR]


def _batched(launcher: str, mask: str = "(rows < batch) & (cols < MN)") -> list:
    return check_source(_HEADER + _BATCHED.format(mask=mask) + launcher, "batched_.py")


_QUOTIENT = """
def lower(x):
    _, M, N = x.shape
    batch = int(torch.numel(x) / M / N) + {extra}
    y = torch.empty_like(x)
    grid = (triton.cdiv(batch, 4),)
    batched_kernel[grid](x, y, batch, M * N, BLOCK_B=4, BLOCK_MN=triton.next_power_of_2(M * N))
    return y
"""


def test_an_int_of_a_size_quotient_is_the_size() -> None:
    clean = _batched(_QUOTIENT.format(extra=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]


def test_a_bug_behind_an_int_of_a_size_quotient_is_found() -> None:
    # one batch row too many: the row past the tensor's leading dimension is read and written
    bug = _batched(_QUOTIENT.format(extra=1))
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB001", "MB002"), [(f.code, f.severity, f.message) for f in bug]


_UNKNOWN_DIVISOR = """
def lower(x, groups):
    M, N = x.shape[-2:]
    batch = int(torch.numel(x) / torch.cuda.get_device_properties(x.device).multi_processor_count)
    y = torch.empty_like(x)
    batched_kernel[(triton.cdiv(batch, 4),)](x, y, batch, M * N, BLOCK_B=4, BLOCK_MN=triton.next_power_of_2(M * N))
"""


def test_a_quotient_by_a_value_the_code_does_not_give_stays_unknown() -> None:
    out = _batched(_UNKNOWN_DIVISOR)
    notes = _value_notes(out)
    assert notes and "`batch`" in notes[0], [(f.code, f.message) for f in out]


_FILL = """
@triton.jit
def fill_kernel(x_ptr, y_ptr, n, pad, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=pad)
    if pad > 1000.0:
        tl.store(y_ptr + offs, v, mask={mask})
"""

_FINFO = """
def fill(x):
    n = x.numel()
    y = torch.empty(n, device=x.device, dtype=torch.float32)
    big = torch.finfo(torch.float32).max / 2
    fill_kernel[(triton.cdiv(n, 128),)](x, y, n, big, BLOCK=128)
    return y
"""


def _fill(launcher: str, mask: str = "offs < n") -> list:
    return check_source(_HEADER + _FILL.format(mask=mask) + launcher, "fill_.py")


def test_a_finfo_limit_is_a_known_number() -> None:
    clean = _fill(_FINFO)
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    # the branch on the limit is taken (3.4e38 / 2 > 1000): the unmasked store behind it overruns
    bug = _fill(_FINFO, mask="None")
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB002"), [(f.code, f.severity, f.message) for f in bug]


_DTYPE_TABLE = """
LIMITS = {
    torch.int32: (tl.int32, torch.iinfo(torch.int32).max),
    torch.float16: (tl.float16, torch.finfo(torch.float16).max),
    torch.float32: (tl.float32, torch.finfo(torch.float32).max),
}


def fill(x):
    n = x.numel()
    _, limit = LIMITS[torch.float32]
    y = torch.empty(n, device=x.device, dtype=torch.float32)
    fill_kernel[(triton.cdiv(n, 128),)](x, y, n, limit, BLOCK=128)
    return y
"""


def test_a_module_table_of_dtype_limits_is_read() -> None:
    clean = _fill(_DTYPE_TABLE)
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _fill(_DTYPE_TABLE, mask="None")
    assert _errors(bug, "MB002"), [(f.code, f.severity, f.message) for f in bug]


_FP8_LIMIT = """
def fill(x):
    n = x.numel()
    y = torch.empty(n, device=x.device, dtype=torch.float32)
    fill_kernel[(triton.cdiv(n, 128),)](x, y, n, torch.finfo(torch.float8_e4m3fn).max, BLOCK=128)
"""


def test_a_limit_of_a_dtype_not_listed_stays_unknown() -> None:
    out = _fill(_FP8_LIMIT)
    notes = _value_notes(out)
    assert notes and "`pad`" in notes[0], [(f.code, f.message) for f in out]


_FLOOR_OF_NUMEL = """
def rows(x):
    N = x.shape[-1]
    x2 = x.view(-1, N)
    batch = x2.numel() // N + {extra}
    y = torch.empty_like(x2)
    batched_kernel[(triton.cdiv(batch, 4),)](x2, y, batch, N, BLOCK_B=4, BLOCK_MN=triton.next_power_of_2(N))
"""


def test_a_numel_divided_by_one_of_its_sizes_measures_the_others() -> None:
    # `x2.numel() // N` of a `(R, N)` view is R again: the kernel is told the rows it walks
    clean = _batched(_FLOOR_OF_NUMEL.format(extra=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _batched(_FLOOR_OF_NUMEL.format(extra=1))
    assert _errors(bug, "MB001", "MB002"), [(f.code, f.severity, f.message) for f in bug]


_NAMED_DTYPE = """
@triton.jit
def named_kernel(x_ptr, y_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    if KIND == "float16":
        tl.store(y_ptr + offs, v, mask={mask})


def copy(n):
    x = torch.empty(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    named_kernel[(triton.cdiv(n, 128),)](x, y, n, KIND={kind}, BLOCK=128)
"""


def _named(kind: str, mask: str = "offs < n") -> list:
    return check_source(_HEADER + _NAMED_DTYPE.format(kind=kind, mask=mask), "named_.py")


def test_the_text_of_a_dtype_is_torchs_name() -> None:
    kind = 'str(x.dtype).split(".")[-1]'
    clean = _named(kind)
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    # "float16": the branch is taken, and its unmasked store overruns `y`
    bug = _named(kind, mask="None")
    assert _errors(bug, "MB002"), [(f.code, f.severity, f.message) for f in bug]


def test_the_text_of_a_tensor_stays_unknown() -> None:
    out = _named('str(x).split(".")[-1]')
    notes = _value_notes(out)
    assert notes and "`KIND`" in notes[0], [(f.code, f.message) for f in out]
