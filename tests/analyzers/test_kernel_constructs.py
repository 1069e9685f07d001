"""Kernel-side constructs behind the largest AR001 groups on public packages (flag-gems,
fla-core, liger-kernel), each modelled by its Triton semantics: the kernel is analyzed through
the construct (a seeded bug past it is found, the fixed kernel is clean), or an internal crash
it used to cause is now a named AR001 or nothing."""

from __future__ import annotations

from argus.analyzers import check_source
from kernel_checks import HEADER, not_modelled
from kernel_checks import failing_explained as failing


def found(text: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in check_source(HEADER + text)]


DTYPE_MIN = """
@triton.jit
def get_dtype_min(dtype):
    dtype_ = dtype.value
    if dtype_.is_floating():
        value: tl.constexpr = float("-inf")
        return value
    if dtype_.is_int_signed():
        width: tl.constexpr = dtype_.int_bitwidth
        value: tl.constexpr = -1 * 2 ** (width - 1)
        return value


@triton.jit
def row_max(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    lo = get_dtype_min(x_ptr.type.element_ty)
    acc = tl.float32 if x_ptr.dtype.element_ty is tl.bfloat16 else x_ptr.dtype.element_ty
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=lo).to(acc)
    tl.store(out_ptr + row, tl.max(x, axis=0))


def launch(x):
    M, N = x.shape
    out = torch.empty((M,), device=x.device, dtype=x.dtype)
    row_max[(M,)](x, out, N, BLOCK=triton.next_power_of_2(N))
"""


def test_a_constexpr_dtype_helper_is_evaluated() -> None:
    """flag-gems' `get_dtype_min(dtype)`: `dtype.value`, `is_floating()`, `int_bitwidth`; the
    extreme it returns is the padding, so the max is judged (and -inf is its neutral element)."""
    assert not_modelled(DTYPE_MIN) == []
    assert failing(DTYPE_MIN) == []
    wrong = DTYPE_MIN.replace('float("-inf")', 'float("inf")')  # a helper returning the wrong extreme
    assert [c for c, *_ in failing(wrong)] == ["DF003"]


def test_dtype_predicates_and_comparisons_are_constexpr() -> None:
    text = DTYPE_MIN.replace(
        "    lo = get_dtype_min(x_ptr.type.element_ty)\n",
        "    if x_ptr.type.scalar.element_ty == tl.float16 or x_ptr.dtype.element_ty.is_fp16():\n"
        "        lo = 0.0\n"
        "    else:\n"
        "        lo = get_dtype_min(x_ptr.type.element_ty)\n",
    )
    assert not_modelled(text) == []
    assert failing(text) == []  # the probe's fp32 tensor takes the -inf branch


REDUCE_ALL = """
@triton.jit
def reduce_all(a, b):
    return a and b


@triton.jit
def all_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=1.0)
    tl.store(out_ptr + row, tl.reduce(x != 0, axis=0, combine_fn=reduce_all))


def launch(x):
    M, N = x.shape
    out = torch.empty((M,), device=x.device, dtype=torch.bool)
    all_kernel[(M,)](x, out, N, BLOCK=triton.next_power_of_2(N))
"""


def test_a_combine_function_passed_by_keyword_is_a_logical_reduction() -> None:
    """`combine_fn=reduce_all` (a keyword, not a call) reaches the helper; `a and b` over
    booleans is an `all`, whose padding must be True."""
    assert not_modelled(REDUCE_ALL) == []
    assert failing(REDUCE_ALL) == []
    assert [c for c, *_ in failing(REDUCE_ALL.replace("other=1.0", "other=0.0"))] == ["DF003"]


DROPOUT = """
@triton.jit
def dropout(x_ptr, y_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r0, r1, r2, r3 = tl.philox(seed, offs.to(tl.uint32), offs * 0, offs * 0, offs * 0)
    u = tl.uint_to_uniform_float(r0)
    v = tl.rand(seed, offs) + tl.randn(seed, offs) * 0.0 + tl.randint(seed, offs).to(tl.float32) * 0.0
    keep = (u > p) & (v >= 0.0)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


def launch(x, p, seed):
    n = x.numel()
    y = torch.empty_like(x)
    dropout[(triton.cdiv(n, 256),)](x, y, n, p, seed, BLOCK=256)
"""


def test_philox_and_the_random_draws_are_modelled() -> None:
    assert not_modelled(DROPOUT) == []
    assert failing(DROPOUT) == []
    unmasked = DROPOUT.replace("tl.load(x_ptr + offs, mask=mask)", "tl.load(x_ptr + offs)")
    assert [c for c, *_ in failing(unmasked)] == ["MB001"]


ALIASED_MATH = """
import some_backend_shim as shim
from .op_helpers import exp

tanh = shim.tanh
pow = shim.pow


@triton.jit
def gelu_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = 0.5 * x * (1 + tanh(0.79788456 * x * (1 + 0.044715 * pow(x, 2.0)))) + exp(x) * 0.0
    tl.store(y_ptr + offs, y, mask=offs < n)


def launch(x):
    n = x.numel()
    y = torch.empty_like(x)
    gelu_tanh[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
"""


def test_a_module_alias_of_a_math_library_function_is_that_function() -> None:
    """`tanh = tl_extra_shim.tanh` (flag-gems picks libdevice per backend at import); `exp`
    imported from a helper module that resolves to no jit function (fla-core's `exp = get_exp()`)."""
    assert not_modelled(ALIASED_MATH) == []
    assert failing(ALIASED_MATH) == []
    oob = ALIASED_MATH.replace("tl.store(y_ptr + offs, y, mask=offs < n)", "tl.store(y_ptr + offs, y)")
    assert [c for c, *_ in failing(oob)] == ["MB002"]


ASM = """
from triton.language.extra import libdevice
from fla.ops.utils.asm import ASM_TEXT_FROM_ELSEWHERE  # (bound: a name bound nowhere is AR002)


@triton.jit
def softplus_asm(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = tl.inline_asm_elementwise(asm=ASM_TEXT_FROM_ELSEWHERE, constraints="=r,r", args=[x],
                                  dtype=tl.float32, is_pure=True, pack=1)
    z = libdevice.fast_cosf(x) + libdevice.atan2(x, x) + libdevice.isfinited(x).to(tl.float32)
    tl.store(y_ptr + offs, y + z, mask=offs < n)


def launch(x):
    n = x.numel()
    y = torch.empty_like(x)
    softplus_asm[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
"""


def test_inline_assembly_keeps_the_lanes_and_leaves_the_value_unknown() -> None:
    """The assembly text (a module constant of another file in fla-core) is never read; the
    result has the operands' shape and the given dtype, so the store is still judged."""
    assert not_modelled(ASM) == []
    assert failing(ASM) == []
    oob = ASM.replace(
        "tl.store(y_ptr + offs, y + z, mask=offs < n)", "tl.store(y_ptr + offs + 1, y + z, mask=offs < n)"
    )
    assert "MB002" in [c for c, *_ in failing(oob)]
    branch = ASM.replace("    tl.store(", "    if tl.sum(y) > 0:\n        tl.store(")
    assert any("inline assembly" in m for m in not_modelled(branch))


ARGMAX = """
@triton.jit
def row_argmax(x_ptr, val_ptr, idx_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    bits = x.to(tl.float32).to(tl.int32, bitcast=True).to(tl.float32, bitcast=True)
    best, where = tl.max(bits, axis=0, return_indices=True)
    tl.store(val_ptr + row, best)
    tl.store(idx_ptr + row, where)


def launch(x):
    M, N = x.shape
    vals = torch.empty((M,), device=x.device, dtype=x.dtype)
    idx = torch.empty((M,), device=x.device, dtype=torch.int32)
    row_argmax[(M,)](x, vals, idx, N, BLOCK=triton.next_power_of_2(N))
"""


def test_max_with_indices_and_bitcasts_are_modelled() -> None:
    assert not_modelled(ARGMAX) == []
    assert failing(ARGMAX) == []
    wrong = ARGMAX.replace('other=-float("inf")', 'other=float("inf")')
    assert [c for c, *_ in failing(wrong)] == ["DF003"]


RUNNING_MAX_NO_LAUNCH = """
@triton.jit
def amax_rows(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    acc = tl.full([BLOCK_M, BLOCK_N], value=float("-inf"), dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        a = tl.load(inp + rows * N + cols, (rows < M) & (cols < N), other=float("-inf"))
        acc = tl.maximum(acc, a)
    tl.store(out + rows, tl.max(acc, axis=1)[:, None], rows < M)
"""


def test_a_running_max_keeps_the_lanes_it_filled_from_real_data() -> None:
    """The last block's padding is not the accumulator's: lanes filled in earlier iterations
    hold real data (this was a DF003 on every `amax`-style kernel without a launch site)."""
    assert failing(RUNNING_MAX_NO_LAUNCH) == []
    wrong = RUNNING_MAX_NO_LAUNCH.replace('other=float("-inf"))', 'other=float("inf"))')
    assert [c for c, *_ in failing(wrong)] == ["DF003"]


UNSIZED_STORE = """
@triton.jit
def add_base(out, B, C, BLOCK: tl.constexpr):
    pid_a = tl.program_id(0)
    pid_b = tl.program_id(1)
    pid_c = tl.program_id(2)
    b_idx = pid_b * BLOCK + tl.arange(0, BLOCK)
    offset = pid_a * B * C + pid_c + b_idx * C
    mask = b_idx < B
    vals = tl.load(out + offset, mask=mask)
    tl.store(out + offset, vals * 2, mask=mask)


def launch(out, A, B, C):
    add_base[(A, triton.cdiv(B, 16), C)](out, B, C, 16)
"""


def test_a_store_past_the_nominal_extent_of_an_unsized_tensor_is_no_crash() -> None:
    """flag-gems' cumsum `add_base_*` kernels: `out` is never unpacked by the launcher (its
    bounds are not judged); the writer table used to be indexed past its end (IndexError)."""
    assert not_modelled(UNSIZED_STORE) == []
    assert failing(UNSIZED_STORE) == []


SCALAR_SUBSCRIPT = """
@triton.jit
def rw(x_ptr, d_x, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    tl.store(x_ptr + rows[:, None] * 2 + d_x[None, :], tl.zeros([BLOCK, 1], dtype=tl.float32))


@triton.jit
def interleaved(x_ptr, BLOCK: tl.constexpr):
    for d in range(0, 4):
        rw(x_ptr, d * 2, BLOCK)
"""


def test_slicing_a_scalar_is_named_not_an_internal_error() -> None:
    messages = not_modelled(SCALAR_SUBSCRIPT)
    assert messages and all("internal" not in m for m in messages)
    assert any("0-d value" in m for m in messages)


def test_a_tuple_index_past_the_end_is_named_not_an_internal_error() -> None:
    text = """
@triton.jit
def last_dim(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr)
    n: tl.constexpr = x.shape[-1]
    tl.store(x_ptr + tl.arange(0, n), x)
"""
    messages = not_modelled(text)
    assert messages and all("internal" not in m for m in messages)


def test_get_int_dtype_gives_the_integer_type_of_a_width() -> None:
    text = ARGMAX.replace(
        "bits = x.to(tl.float32).to(tl.int32, bitcast=True).to(tl.float32, bitcast=True)",
        "itype = tl.core.get_int_dtype(bitwidth=x.to(tl.float32).dtype.primitive_bitwidth, signed=True)\n"
        "    bits = x.to(tl.float32).to(itype, bitcast=True).to(tl.float32, bitcast=True)",
    )
    assert not_modelled(text) == []
    assert failing(text) == []


def test_a_vendor_philox_of_another_signature_is_not_taken_for_tl_philox() -> None:
    """Cambricon's `from triton.language.extra.mlu.libdevice import philox as _philox` takes
    (BLOCK, seed_lo, seed_hi, c0, c1, c2, c3, n_rounds) and returns one (BLOCK, 4) block of
    draws (flag-gems reads `r[:, 0]` and reshapes it to `4 * BLOCK` lanes): its own op, not
    `tl.philox` (which made a tuple that a reshape then crashed on). A reshape of the block to
    BLOCK lanes is named, not a crash."""
    philox = "    r0, r1, r2, r3 = tl.philox(seed, offs.to(tl.uint32), offs * 0, offs * 0, offs * 0)\n"
    header = "from triton.language.extra.mlu.libdevice import philox as _philox\n"
    column = header + DROPOUT.replace(philox, "    r0 = _philox(BLOCK, seed, seed, offs, 0, 0, 0, 10)[:, 0]\n")
    assert not_modelled(column) == []
    assert failing(column) == []
    short = header + DROPOUT.replace(philox, "    r0 = tl.reshape(_philox(BLOCK, seed, seed, offs, 0, 0, 0, 10), [BLOCK])\n")
    messages = not_modelled(short)
    assert messages and all("internal" not in m for m in messages)
    assert any("reshape" in m for m in messages)


def test_a_descriptor_store_of_a_tile_larger_than_its_block_is_named() -> None:
    text = """
@triton.jit
def store_tiles(y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, 1])
    desc.store([tl.program_id(0) * BM, 0], tl.zeros([BM, BN], dtype=tl.float32))


def launch(y):
    M, N = y.shape
    store_tiles[(triton.cdiv(M, 4),)](y, M, N, BM=4, BN=4)
"""
    messages = not_modelled(text)
    assert any("descriptor store of a (4, 4) tile" in m for m in messages)
    assert all("internal" not in m for m in messages)
