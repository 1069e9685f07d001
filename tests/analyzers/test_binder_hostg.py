"""Launch values the code does establish, followed instead of refused (issue 12, coverage):

- a `@triton.heuristics` entry that names a function of the module (`"BLOCK": heur_block`) is
  evaluated at the probe's arguments; one the checker cannot compute (it reads the device)
  picks a tile, and a finding resting on it is a hint naming it;
- a launch under `elif mode == 0:` is probed with `mode = 0`, not refused at its default;
- a launch in an autograd `backward` reads what its `forward` stored (`ctx.C = C`,
  `ctx.save_for_backward(x)`): the forward runs first, so `ctx.C` is the saved tensor's width;
- an assert relating sizes (`assert cos.shape[-1] * 2 == q.shape[-1]`, `assert M == HC * HC +
  2 * HC`) gives probe sizes that satisfy it, and `if K % 64 != 0: raise` multiples of 64.

Each construct is checked on a correct launch (no AR001, no finding) and on a seeded bug (found,
at the severity the facts allow).
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl
"""

_HEURISTIC = """
def heur_block(args):
    return triton.next_power_of_2(args["n_cols"])


def heur_device_block(args):
    return torch.cuda.get_device_properties(0).max_shared_memory // 1024


@triton.heuristics({{"BLOCK": {entry}}})
@triton.jit
def row_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * n_cols + cols, mask={mask})
    tl.store(y_ptr + row * n_cols + cols, v * 2, mask=cols < n_cols)


def rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    row_kernel[(n_rows,)](x, y, n_cols)
    return y
"""

_GUARDED = """
@triton.jit
def l0_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask={mask}, other=0.0)
    tl.store(out_ptr + offs, (v != 0).to(tl.float32), mask=offs < n)


@triton.jit
def l2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, v * v, mask=offs < n)


def norm_parts(x, ord=2):
    n = x.numel()
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 128),)
    if ord == 2:
        l2_kernel[grid](x, out, n, BLOCK=128)
    elif ord == 0:
        l0_kernel[grid](x, out, n, BLOCK=128)
    return out
"""

_ROTARY = """
@triton.jit
def rotary_kernel(q_ptr, cos_ptr, out_ptr, D: tl.constexpr, HALF: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < HALF
    c = tl.load(cos_ptr + row * HALF + offs, mask=m)
    a = tl.load(q_ptr + row * D + offs, mask=m)
    b = tl.load(q_ptr + row * D + HALF + offs{shift}, mask=m)
    tl.store(out_ptr + row * D + offs, a * c - b, mask=m)
    tl.store(out_ptr + row * D + HALF + offs, b * c + a, mask=m)


def rotary(q, cos):
    assert cos.shape[-1] * 2 == q.shape[-1]
    n_rows, D = q.shape
    out = torch.empty_like(q)
    rotary_kernel[(n_rows,)](q, cos, out, D, D // 2, triton.next_power_of_2(D // 2))
    return out
"""

_PRODUCT = """
@triton.jit
def mix_kernel(x_ptr, y_ptr, M: tl.constexpr, HC: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * M + offs, mask=offs < M)
    tl.store(y_ptr + row * M + offs{shift}, v, mask=offs < M)


def mix(x, HC):
    n, M = x.shape
    assert HC * HC + 2 * HC == M
    y = torch.empty_like(x)
    mix_kernel[(n,)](x, y, M, HC, triton.next_power_of_2(M))
    return y
"""

_MULTIPLE = """BLOCK_K = 64

@triton.jit
def kk(x_ptr, y_ptr, K: tl.constexpr, BK: tl.constexpr):
    row = tl.program_id(0)
    for k0 in range(0, K, BK):
        offs = k0 + tl.arange(0, BK)
        v = tl.load(x_ptr + row * K + offs{shift})
        tl.store(y_ptr + row * K + offs, v)

def f(x):
    N, K = x.shape
    if K % BLOCK_K != 0:
        raise ValueError("no")
    y = torch.empty_like(x)
    kk[(N,)](x, y, K, BLOCK_K)
    return y
"""

_AUTOGRAD = """

@triton.jit
def scale_bwd_kernel(dy_ptr, x_ptr, dx_ptr, C, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < C
    dy = tl.load(dy_ptr + row * C + cols, mask=m)
    x = tl.load(x_ptr + row * C + cols, mask={mask})
    keep = cols != ignore_index
    tl.store(dx_ptr + row * C + cols, tl.where(keep, dy * x, 0.0), mask=m)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ignore_index):
        N, C = x.shape
        y = x * 2
        ctx.save_for_backward(x)
        ctx.C = C
        ctx.BLOCK = 64
        ctx.ignore_index = ignore_index
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        C = ctx.C
        dx = torch.empty_like(x)
        scale_bwd_kernel[(x.shape[0],)](dy, x, dx, C, ctx.ignore_index, BLOCK=triton.next_power_of_2(C))
        return dx, None
"""


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _bounds(findings: list) -> list:
    return [f for f in findings if f.code == "MB001"]


def test_a_heuristic_named_function_is_evaluated_at_the_probe() -> None:
    good = check_source(_HEADER + _HEURISTIC.format(entry="heur_block", mask="cols < n_cols"), "h.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _HEURISTIC.format(entry="heur_block", mask="None"), "h.py")
    assert not _notes(bad), _notes(bad)
    # the block is the next power of two of the row: a ragged row is overread, a fact
    assert [f for f in _failing(bad) if f.code == "MB001"], [(f.code, f.message) for f in bad]


def test_a_lambda_heuristic_reads_the_arguments() -> None:
    entry = 'lambda args: triton.next_power_of_2(args["n_cols"])'
    bad = check_source(_HEADER + _HEURISTIC.format(entry=entry, mask="None"), "h.py")
    assert not _notes(bad), _notes(bad)
    assert [f for f in _failing(bad) if f.code == "MB001"]


def test_an_unevaluable_tile_heuristic_is_a_named_pick_and_its_finding_a_hint() -> None:
    good = check_source(_HEADER + _HEURISTIC.format(entry="heur_device_block", mask="cols < n_cols"), "h.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _HEURISTIC.format(entry="heur_device_block", mask="None"), "h.py")
    assert not _notes(bad), _notes(bad)
    assert not _failing(bad)  # the overread rests on the picked tile
    hints = [f for f in _bounds(bad) if f.severity == Severity.HINT]
    assert hints and "`BLOCK` (a heuristic the checker cannot evaluate)" in hints[0].message


def test_a_launch_under_an_equality_test_is_probed_at_that_value() -> None:
    good = check_source(_HEADER + _GUARDED.format(mask="offs < n"), "g.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _GUARDED.format(mask="None"), "g.py")
    assert not _notes(bad), _notes(bad)
    errors = [f for f in _failing(bad) if f.code == "MB001"]
    assert errors and {f.kernel for f in errors} == {"l0_kernel"}, [(f.code, f.message) for f in bad]


def test_an_assert_relating_sizes_gives_sizes_that_satisfy_it() -> None:
    good = check_source(_HEADER + _ROTARY.format(shift=""), "r.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _ROTARY.format(shift=" + 1"), "r.py")
    assert not _notes(bad), _notes(bad)
    assert [f for f in _failing(bad) if f.code == "MB001"], [(f.code, f.message) for f in bad]


def test_a_product_relation_is_solved_for_the_size_it_names() -> None:
    good = check_source(_HEADER + _PRODUCT.format(shift=""), "p.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _PRODUCT.format(shift=" + HC"), "p.py")
    assert not _notes(bad), _notes(bad)
    assert [f for f in _failing(bad) if f.code == "MB002"], [(f.code, f.message) for f in bad]


def test_a_backward_reads_the_ctx_its_forward_filled() -> None:
    good = check_source(_HEADER + _AUTOGRAD.format(mask="m"), "a.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _AUTOGRAD.format(mask="None"), "a.py")
    assert not _notes(bad), _notes(bad)
    # `x` is the forward's saved tensor, `C` its width: the unmasked read passes its rows
    assert [f for f in _failing(bad) if f.code == "MB001"], [(f.code, f.message) for f in bad]


def test_a_constexpr_size_required_to_be_a_multiple_is_probed_at_multiples() -> None:
    good = check_source(_HEADER + _MULTIPLE.format(shift=""), "k.py")
    assert not _notes(good), _notes(good)
    assert not _failing(good)
    bad = check_source(_HEADER + _MULTIPLE.format(shift=" + 1"), "k.py")
    assert [f for f in _failing(bad) if f.code == "MB001"], [(f.code, f.message) for f in bad]
