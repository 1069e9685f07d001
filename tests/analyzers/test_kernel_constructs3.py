"""Kernel-side constructs behind the AR001 groups left after `kcov2` (branch `kcov3`): each is
modelled by its Triton semantics, so the kernel is analyzed through it; a seeded bug past it is
found and the correct kernel is clean. The internal errors the real packages hit are regression
kernels here."""

from __future__ import annotations

from argus.analyzers import Severity, check_source
from argus.analyzers.project import SourceSet
from kernel_checks import HEADER, codes, failing, not_modelled

# flag-gems' isin: the combine function is picked by a constexpr at compile time
CHOSEN_COMBINE = """
@triton.jit
def both(a, b):
    return a & b


@triton.jit
def either(a, b):
    return a | b


@triton.jit
def row_test_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr, ALL: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=ALL)
    hit = tl.reduce(x != 0, 0, combine_fn=(both if ALL else either))
    tl.store(out_ptr + row, hit)


def row_test(x, all_of: bool):
    M, N = x.shape
    out = torch.empty((M,), dtype=torch.bool, device=x.device)
    row_test_kernel[(M,)](x, out, N, BLOCK=triton.next_power_of_2(N), ALL=all_of)
    return out
"""


def test_a_combine_function_chosen_by_a_conditional() -> None:
    assert not_modelled(CHOSEN_COMBINE) == []
    assert failing(CHOSEN_COMBINE) == []
    assert "MB002" in codes(CHOSEN_COMBINE.replace("tl.store(out_ptr + row,", "tl.store(out_ptr + row + 1,"))


# Cambricon's elementwise kernels autotune a block of 2**17 elements (legal: Triton's cap is 2**20)
WIDE_BLOCK = """
@triton.autotune(configs=[triton.Config({"BLOCK": 131072})], key=["n"])
@triton.jit
def neg_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    for off in range(start, n, tl.num_programs(0) * BLOCK):
        offs = off + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def neg(x):
    y = torch.empty_like(x)
    n = x.numel()
    neg_kernel[lambda meta: (min(triton.cdiv(n, meta["BLOCK"]), 4),)](x, y, n)
    return y
"""


def test_an_arange_up_to_tritons_cap_is_modelled() -> None:
    assert not_modelled(WIDE_BLOCK) == []
    assert failing(WIDE_BLOCK) == []
    assert codes(WIDE_BLOCK.replace("mask=offs < n), mask=offs < n)", "mask=offs < n), mask=offs <= n)")) == {
        "MB002"
    }
    over = WIDE_BLOCK.replace("131072", str(1 << 21))
    assert any("tl.arange(0, 2097152)" in m for m in not_modelled(over))


# Python's `max`/`min` inside a kernel are `tl.maximum`/`tl.minimum`; `x.numel` is a constexpr
CLAMPED_WINDOW = """
@triton.jit
def window_kernel(x_ptr, w_ptr, y_ptr, n, m, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.static_assert(offs.numel == BLOCK)
    src = max(0, offs - SHIFT)
    src = min(src, m - 1)
    w = tl.load(w_ptr + src, mask=offs < n, other=0.0)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, v * w, mask=offs < n)


def window(x, w):
    y = torch.empty_like(x)
    n = x.numel()
    m = w.numel()
    window_kernel[(triton.cdiv(n, 64),)](x, w, y, n, m, SHIFT=3, BLOCK=64)
    return y
"""


def test_builtin_max_of_tiles_is_elementwise() -> None:
    assert not_modelled(CLAMPED_WINDOW) == []
    assert failing(CLAMPED_WINDOW) == []
    unclamped = CLAMPED_WINDOW.replace("src = max(0, offs - SHIFT)", "src = offs - SHIFT")
    assert codes(unclamped) == {"MB001"}


# flag-gems' radix sort: a `@tl.constexpr` Python function picks the integer type per bit width
COMPILE_TIME = """
@tl.constexpr
def int_of(num_bits: tl.constexpr, signed: tl.constexpr) -> tl.dtype:
    num_bits = unwrap_if_constexpr(num_bits)
    return tl.core.get_int_dtype(num_bits, signed)


def unwrap_if_constexpr(o):
    return o.value if isinstance(o, tl.constexpr) else o


@triton.jit
def bits_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    bits = x.to(int_of(32, False), bitcast=True)
    tl.store(y_ptr + offs, (bits >> 31).to(tl.int32), mask=offs < n)


def sign_bits(x):
    (n,) = x.shape
    y = torch.empty((n,), dtype=torch.int32, device=x.device)
    bits_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
"""


def test_a_compile_time_function_runs_as_a_helper() -> None:
    assert not_modelled(COMPILE_TIME) == []
    assert failing(COMPILE_TIME) == []
    assert codes(COMPILE_TIME.replace("mask=offs < n, other=0.0)", "mask=offs <= n, other=0.0)")) == {"MB001"}


# flag-gems' nll_loss backward: `total_weight=None` is the wrapper's default, every caller passes it
ABSENT_POINTER = """
@triton.jit
def scale_kernel(g_ptr, total_weight, out_ptr, n, REDUCTION: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    g = tl.load(g_ptr + offs, mask=offs < n, other=0.0)
    if REDUCTION == 1:
        g = g / tl.load(total_weight)
    tl.store(out_ptr + offs, g, mask=offs < n)


def scale(g, total_weight=None, reduction=1):
    out = torch.empty_like(g)
    n = g.numel()
    scale_kernel[(triton.cdiv(n, 128),)](g, total_weight, out, n, REDUCTION=reduction, BLOCK=128)
    return out
"""


def test_a_load_straight_through_a_none_pointer_parameter() -> None:
    assert not_modelled(ABSENT_POINTER) == []
    assert failing(ABSENT_POINTER) == []
    assert codes(
        ABSENT_POINTER.replace("tl.store(out_ptr + offs, g, mask=offs < n)", "tl.store(out_ptr + offs, g)")
    ) == {"MB002"}


# flag-gems' topk/sort: a bitonic compare-and-swap selects one lane of each pair by multiplying
# with a constant 0/1 selector and summing the pair; ids go through the same network and then
# serve as addresses (randperm's shuffle stores each value at its sorted position)
PAIR_SWAP = """
@triton.jit
def pair_swap_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=3.0e38)
    y = tl.reshape(x, [BLOCK // 2, 2])
    y_id = tl.reshape(offs, [BLOCK // 2, 2])
    sel = tl.arange(0, 2)[None, :]
    lo = tl.sum(y * (1 - sel), 1)
    hi = tl.sum(y * sel, 1)
    lo_id = tl.sum(y_id * (1 - sel), 1)
    hi_id = tl.sum(y_id * sel, 1)
    swap = lo > hi
    first_id = tl.where(swap, hi_id, lo_id)
    second_id = tl.where(swap, lo_id, hi_id)
    pos = tl.arange(0, BLOCK // 2) * 2
    tl.store(out_ptr + first_id, tl.load(x_ptr + pos, mask=pos < n, other=0.0), mask=first_id < n)
    tl.store(out_ptr + second_id, tl.load(x_ptr + pos + 1, mask=pos + 1 < n, other=0.0), mask=second_id < n)


def pair_swap(x):
    out = torch.empty_like(x)
    n = x.numel()
    pair_swap_kernel[(1,)](x, out, n, BLOCK=triton.next_power_of_2(n))
    return out
"""


def test_a_selection_by_a_constant_selector_is_that_lane() -> None:
    """The pair sums are selections (padding only where the selected lane was, no DF003); the
    stores through the permuted ids are not judged as transposed values (DF004)."""
    assert not_modelled(PAIR_SWAP) == []
    assert failing(PAIR_SWAP) == []
    unmasked = PAIR_SWAP.replace("mask=first_id < n)", "mask=first_id >= 0)")
    assert codes(unmasked) == {"MB002"}


def test_a_plain_sum_of_padded_lanes_is_still_judged() -> None:
    """Without the selector, padding of 3e38 summed with real lanes is the DF003 it always was."""
    text = PAIR_SWAP.replace("lo = tl.sum(y * (1 - sel), 1)", "lo = tl.sum(y, 1)")
    assert "DF003" in codes(text)


# flag-gems' vstack picks its input tensor per program
POINTER_CHOICE = """
@triton.jit
def stack_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    which = tl.program_id(1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(which == 0, a_ptr, b_ptr)
    tl.store(out_ptr + which * n + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def stack(a, b):
    n = a.numel()
    out = torch.empty((2, n), dtype=a.dtype, device=a.device)
    stack_kernel[(triton.cdiv(n, 64), 2)](a, b, out, n, BLOCK=64)
    return out
"""


def test_where_between_pointers_under_a_program_wide_condition() -> None:
    assert not_modelled(POINTER_CHOICE) == []
    assert failing(POINTER_CHOICE) == []
    assert "MB002" in codes(POINTER_CHOICE.replace("which * n + offs", "which * n + offs + 1"))
    per_lane = POINTER_CHOICE.replace("tl.where(which == 0,", "tl.where(offs < 3,")
    assert any("between pointers under a per-lane condition" in m for m in not_modelled(per_lane))


# flag-gems' reflection pad: `tl.abs` of an integer index is an integer
REFLECT = """
@triton.jit
def reflect_kernel(x_ptr, y_ptr, w_in, pad, w_out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t = tl.abs(offs - pad)
    period = 2 * (w_in - 1)
    m = t % period
    src = tl.where(m < w_in, m, period - m)
    tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=offs < w_out), mask=offs < w_out)


def reflect(x, pad):
    w_in = x.numel()
    w_out = w_in + 2 * pad
    y = torch.empty((w_out,), dtype=x.dtype, device=x.device)
    reflect_kernel[(triton.cdiv(w_out, 64),)](x, y, w_in, pad, w_out, BLOCK=64)
    return y
"""


def test_abs_of_an_integer_index() -> None:
    assert not_modelled(REFLECT) == []
    assert failing(REFLECT) == []
    assert codes(
        REFLECT.replace(
            "mask=offs < w_out), mask=offs < w_out)", "mask=offs < w_out), mask=offs < w_out + 1)"
        )
    ) == {"MB002"}


# flag-gems' randperm: a 64-bit bitcast (the internal OverflowError of `1 << 64`)
WIDE_BITCAST = """
@triton.jit
def key_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k = tl.load(x_ptr + offs, mask=offs < n, other=0).to(tl.uint64)
    tl.store(y_ptr + offs, (k ^ 0x7FFFFFFFFFFFFFFF).to(tl.int64, bitcast=True), mask=offs < n)


def keys(x):
    (n,) = x.shape
    y = torch.empty((n,), dtype=torch.int64, device=x.device)
    key_kernel[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y
"""


def test_a_64_bit_bitcast() -> None:
    assert not_modelled(WIDE_BITCAST) == []
    assert failing(WIDE_BITCAST) == []
    assert "MB001" in codes(WIDE_BITCAST.replace("x_ptr + offs,", "x_ptr + offs + 1,"))
    past = WIDE_BITCAST.replace("0x7FFFFFFFFFFFFFFF", "0x8000000000000000")  # uint64 in Triton
    assert any("0x8000000000000000 (outside int64)" in m for m in not_modelled(past))


def package(files: dict[str, str]) -> tuple[SourceSet, dict[str, bytes]]:
    """A package in memory under /pkg-root: the set and the texts by path."""
    texts = {f"/pkg-root/{rel}": text.encode() for rel, text in files.items()}
    modules = {p[len("/pkg-root/") : -3].replace("/", ".").removesuffix(".__init__"): p for p in texts}
    return SourceSet(modules, texts.get, lambda p: p[len("/pkg-root/") :]), texts


# a helper of another module reads that module's constants; a descriptor factory and a dot
# precision that module sets under an `if` (fla-core's `make_tensor_descriptor`,
# `SOLVE_TRIL_DOT_PRECISION`)
HELPERS = """
import torch
import triton
import triton.language as tl

FAST = False
_FLOOR = tl.constexpr(torch.finfo(torch.float16).min)
if FAST:
    make_tensor_descriptor = tl._experimental_make_tensor_descriptor
    PRECISION = tl.constexpr("tf32")
else:
    make_tensor_descriptor = tl.make_tensor_descriptor
    PRECISION = tl.constexpr("ieee")


@triton.jit
def floor_of(x):
    return tl.maximum(x, _FLOOR)
"""

USER = """
import torch
import triton
import triton.language as tl

from pkg.helpers import PRECISION, floor_of, make_tensor_descriptor


@triton.jit
def clamp_matmul_kernel(a_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.program_id(0)
    desc = make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    a = floor_of(desc.load([i * BM, 0]))
    rn = tl.arange(0, BN)
    b = tl.load(b_ptr + rn[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    rm = i * BM + tl.arange(0, BM)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], c, mask=rm[:, None] < M)


def clamp_matmul(a, b):
    M, N = a.shape
    out = torch.empty((M, N), dtype=torch.float32, device=a.device)
    clamp_matmul_kernel[(triton.cdiv(M, 16),)](a, b, out, M, N, BM=16, BN=N)
    return out
"""


def test_names_of_another_module_resolve_there() -> None:
    project, texts = package({"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/user.py": USER})
    path = "/pkg-root/pkg/user.py"
    out = check_source(texts[path], path, project=project)
    assert [f.message for f in out if f.code == "AR001"] == []
    assert [f for f in out if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"] == []
    seeded = USER.replace("mask=rm[:, None] < M)", "mask=rm[:, None] <= M)").encode()
    project2, texts2 = package(
        {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/user.py": seeded.decode()}
    )
    found = check_source(texts2[path], path, project=project2)
    assert {f.code for f in found if f.severity == Severity.ERROR} == {"MB002"}


def test_an_edit_of_a_compile_time_function_rechecks_the_kernel() -> None:
    """The kernel cache keys on the compile-time functions a kernel calls, as on its helpers."""
    from argus.analyzers import KernelCache

    cache = KernelCache()
    assert failing(COMPILE_TIME) == []
    first = check_source(HEADER + COMPILE_TIME, cache=cache)
    assert [f for f in first if f.code == "AR001"] == []
    broken = COMPILE_TIME.replace("return tl.core.get_int_dtype(num_bits, signed)", "return undefined_name")
    again = check_source(HEADER + broken, cache=cache)
    assert any("undefined_name" in f.message for f in again if f.code == "AR001")
