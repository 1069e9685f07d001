"""Launchers that read their inputs out of `*args, **kwargs` (model/host_caller_args.py), and
the launcher idioms modelled beside them (`torch.movedim`, `list.insert`, the rank an unpacked
`tuple(x.shape)` gives, `m.get(key, default)`).

Each case checks two things: the value is computed (no AR001 "the value of ... is not known
without running the launcher"), and a seeded bug that rests on it is still found.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
"""

_SCALE = """
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask={mask})
    tl.store(x_ptr + offs, v * 2, mask={mask})
"""


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _check(launcher: str, mask: str = "offs < n", kernel: str = _SCALE) -> list:
    return check_source(_HEADER + kernel.format(mask=mask) + launcher, "scale_.py")


_POSITIONAL = """
def scale_(*args, **kwargs):
    if len(args) >= 1:
        x = args[0]
    elif "input" in kwargs:
        x = kwargs["input"]
    else:
        raise ValueError("scale_ wants a tensor")
    if not isinstance(x, torch.Tensor):
        raise TypeError("not a tensor")
    out = kwargs.get("out", None)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, n, BLOCK=256)
    return x
"""


def test_a_tensor_read_from_args_is_the_kernels_tensor() -> None:
    clean = _check(_POSITIONAL)
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    # `x.numel()` measures the very tensor `x_ptr` addresses: an unmasked tile overruns it
    bug = _check(_POSITIONAL, mask="None")
    assert not _notes(bug), _notes(bug)
    mb = [f for f in bug if f.code == "MB001" and f.severity == Severity.ERROR]
    assert mb and "`x_ptr`" in mb[0].message, [(f.code, f.severity, f.message) for f in bug]


_KEYWORD = """
def scale_(*args, **kwargs):
    x = kwargs["input"]
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, n, BLOCK=256)
"""

_CONDITIONAL = """
def scale_(*args, **kwargs):
    x = args[0] if len(args) > 0 else kwargs.get("input", None)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256) + {extra},)](x, n, BLOCK=256)
"""


def test_keyword_and_conditional_reads_bind_the_same_input() -> None:
    for launcher in (_KEYWORD, _CONDITIONAL.format(extra=0)):
        clean = _check(launcher)
        assert not _notes(clean), (launcher, _notes(clean))
        assert not _failing(clean), (launcher, [(f.code, f.message) for f in clean])
        bug = _check(launcher, mask="None")
        assert any(f.code == "MB001" and f.severity == Severity.ERROR for f in bug), launcher


def test_the_grid_computed_from_an_args_tensor_is_judged() -> None:
    # a grid one program short: the tail of the tensor `args[0]` names is never scaled
    short = _check(_CONDITIONAL.format(extra=-1), kernel=_SCALE)
    assert not _notes(short), _notes(short)
    assert any(f.severity in (Severity.ERROR, Severity.WARNING) for f in short), [
        (f.code, f.severity, f.message) for f in short
    ]


_SCALAR = """
def fill_(*args, **kwargs):
    x, value = args[0], args[1]
    n = x.numel()
    fill_kernel[(triton.cdiv(n, 128),)](x, value, n, BLOCK=128)
"""

_FILL = """
@triton.jit
def fill_kernel(x_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, value, mask={mask})
"""


def test_a_scalar_read_from_args_is_a_launcher_input() -> None:
    clean = _check(_SCALAR, kernel=_FILL)
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(_SCALAR, mask="offs < n + 1", kernel=_FILL)
    assert any(f.code == "MB002" and f.severity == Severity.ERROR for f in bug), [
        (f.code, f.message) for f in bug
    ]


def test_an_input_read_in_place_only_stays_unknown() -> None:
    # `args[0].numel()` is never read into a name: nothing says args[0] is a tensor, so the
    # value stays an honest AR001 note (never a guessed tensor)
    launcher = """
def scale_(*args, **kwargs):
    n = args[0].numel()
    scale_kernel[(triton.cdiv(n, 256),)](args[0], n, BLOCK=256)
"""
    findings = _check(launcher)
    assert _notes(findings), [(f.code, f.message) for f in findings]
    assert not _failing(findings), [(f.code, f.message) for f in findings]


_ROWS = """
@triton.jit
def rows_kernel(x_ptr, y_ptr, K, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * K + offs, mask={mask})
    tl.store(y_ptr + row * K + offs, v, mask={mask})
"""

_MOVEDIM = """
def last_axis_copy(x: torch.Tensor, dim: int):
    moved = torch.movedim(x, dim, -1).contiguous()
    K = moved.shape[-1]
    M = moved.numel() // K
    y = torch.empty_like(moved)
    rows_kernel[(M,)](moved, y, K, BLOCK=triton.next_power_of_2(K))
    return y
"""


def test_movedim_keeps_the_sizes_of_the_axes_it_moves() -> None:
    clean = _check(_MOVEDIM, kernel=_ROWS, mask="offs < K")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(_MOVEDIM, kernel=_ROWS, mask="offs < K + 1")
    assert any(f.code == "MB001" and f.severity in (Severity.ERROR, Severity.WARNING) for f in bug), [
        (f.code, f.severity, f.message) for f in bug
    ]


_STRIDES = """
@triton.jit
def pool_kernel(x_ptr, o_ptr, C, H, so_n, so_c, so_h, so_w):
    n = tl.program_id(0)
    c = tl.program_id(1)
    v = tl.load(x_ptr + n * C + c)
    tl.store(o_ptr + n * so_n + c * so_c + {mask} * so_h, v)
"""

_STRIDE_UNPACK = """
def pool(x, out):
    N, C = x.shape
    On, Oc, H, Ow = tuple(out.shape)
    so_n, so_c, so_h, so_w = out.stride()
    pool_kernel[(N, C)](x, out, C, H, so_n, so_c, so_h, so_w)
"""


def test_an_unpacked_tuple_of_the_shape_gives_the_rank() -> None:
    clean = _check(_STRIDE_UNPACK, kernel=_STRIDES, mask="0")
    assert not [m for m in _notes(clean) if "(unpack)" in m], _notes(clean)


_INSERT = """
def unsqueeze_copy(x, dim):
    out_shape = list(x.shape)
    out_shape.insert(dim, 1)
    out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, out, out.shape[{axis}], n, BLOCK=128)
    return out
"""

_COPY = """
@triton.jit
def copy_kernel(x_ptr, o_ptr, width, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask={mask})
    tl.store(o_ptr + offs, v, mask={mask})
"""


def test_list_insert_adds_the_axis_to_the_shape() -> None:
    # `x` is 2-d; the kernel is passed `out.shape[2]`, which exists only once `insert` has
    # added an axis (without it the value was unknown: an AR001 note)
    launcher = _INSERT.replace("def unsqueeze_copy(x, dim):", "def unsqueeze_copy(x, dim):\n    M, N = x.shape")
    clean = _check(launcher.format(axis=2), kernel=_COPY, mask="offs < (n // width) * width")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(launcher.format(axis=2), kernel=_COPY, mask="offs < n + width")
    assert any(f.code in ("MB001", "MB002") and f.severity == Severity.ERROR for f in bug), [
        (f.code, f.severity, f.message) for f in bug
    ]


_SORTED_ROWS = """
import builtins


def sorted_rows(x):
    n_rows, n_cols = x.shape
    s = torch.sort(x.float(), dim=-1, descending=True).values
    BLOCK = builtins.min(4096, triton.next_power_of_2(n_cols))
    y = torch.empty_like(s)
    rows_kernel[(n_rows,)](s, y, s.stride(0), BLOCK=BLOCK)
    return y
"""


def test_sorted_values_and_builtins_min_are_computed() -> None:
    # `.values` of `torch.sort(...)` is the sorted tensor (its stride known); `builtins.min`
    # is `min` (flag-gems and liger shadow `min` and call it so)
    clean = _check(_SORTED_ROWS, kernel=_ROWS, mask="offs < K")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(_SORTED_ROWS, kernel=_ROWS, mask="offs < K + 1")
    assert any(f.code == "MB001" and f.severity == Severity.ERROR for f in bug), [
        (f.code, f.severity, f.message) for f in bug
    ]


_LIST_UNPACK = """
def heads(q):
    batch, seq, n_heads, d = list(q.shape)
    o = torch.empty_like(q)
    rows_kernel[(batch * seq * n_heads,)](q, o, d, BLOCK=triton.next_power_of_2(d))
    return o
"""


def test_an_unpacked_list_of_the_shape_gives_the_rank() -> None:
    clean = _check(_LIST_UNPACK, kernel=_ROWS, mask="offs < K")
    assert not _notes(clean), _notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(_LIST_UNPACK, kernel=_ROWS, mask="offs < K + 1")
    assert any(f.code == "MB001" and f.severity == Severity.ERROR for f in bug), [
        (f.code, f.severity, f.message) for f in bug
    ]


_UPSCALE = """
@triton.jit
def upscale_kernel(x_ptr, o_ptr, W, R, so_n, so_w, n_out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_out
    wo = offs % (W * R)
    no = offs // (W * R)
    v = tl.load(x_ptr + no * W + wo // R, mask=m)
    tl.store(o_ptr + no * so_n + wo * so_w, v, mask=m)
"""

_UPSCALE_LAUNCH = """
def launch_upscale(x, out, r):
    N, W = x.shape
    so_n, so_w = out.stride()
    n_out = out.numel()
    upscale_kernel[(triton.cdiv(n_out, 128),)](x, out, W, r, so_n, so_w, n_out, BLOCK=128)
"""


def test_a_tensor_known_only_by_its_strides_is_not_given_a_guessed_shape() -> None:
    # `so_n, so_w = out.stride()` and `out.numel()` name no extent of `out`: the caller sizes
    # it (N, W * r). Its rank is not taken from the strides alone: the strides stay unknown
    # (an AR001 note), as before, rather than a layout the probe would choose apart from x's
    findings = check_source(_HEADER + _UPSCALE + _UPSCALE_LAUNCH, "upscale.py")
    assert [m for m in _notes(findings) if "(unpack)" in m], _notes(findings)

