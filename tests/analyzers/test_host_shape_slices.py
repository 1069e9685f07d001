"""Launcher sizes taken from a slice of a shape (`HV, V = u.shape[2:]`, `B, S = x.shape[:2]`,
`(b, t, *do.shape[-2:])`) and from a shape stored on an object first (`ctx.input_shape =
x.shape` in an autograd `forward`): model/launcher_reads.py gives the tensor the rank the
slice implies, host_stores.py keeps the stored attribute.

Each idiom: the value is computed (no AR001 "the value of ... is not known without running the
launcher"), a seeded bug that rests on it is found, and where the code leaves a tensor's rank
open (`x.shape[:2]` says nothing of the dimensions after the second) that tensor's bounds stay
unjudged instead of resting on a guessed rank.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_HEADER = """
import torch
import triton
import triton.language as tl

@triton.jit
def rows_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * N + offs, mask={mask})
    tl.store(y_ptr + row * N + offs, v, mask={mask})
"""


def _check(launcher: str, mask: str = "offs < N") -> list:
    return check_source(_HEADER.format(mask=mask) + launcher, "rows_.py")


def _value_notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001" and "without running the launcher" in f.message]


def _errors(findings: list, code: str) -> list:
    return [f for f in findings if f.code == code and f.severity == Severity.ERROR]


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


_TAIL_SLICE = """
def per_head(u):
    HV, V = u.shape[2:]
    y = torch.empty_like(u)
    rows_kernel[(u.numel() // V + {extra},)](u, y, V, BLOCK=triton.next_power_of_2(V))
    return y
"""


def test_a_shape_slice_to_the_end_gives_the_rank_and_the_sizes() -> None:
    clean = _check(_TAIL_SLICE.format(extra=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    # `u.shape[2:]` unpacked into two names: u has exactly four dimensions, all stated, so a
    # grid one row too long overruns `u` and `y` (found on main only as a stand-in AR001)
    bug = _check(_TAIL_SLICE.format(extra=1))
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB001"), [(f.code, f.severity, f.message) for f in bug]


def test_an_unmasked_row_behind_a_sliced_size_is_found() -> None:
    bug = _check(_TAIL_SLICE.format(extra=0), mask="None")
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB001"), [(f.code, f.severity, f.message) for f in bug]


_HEAD_SLICE = """
def packed(x):
    B, S = x.shape[:2]
    y = torch.empty(B, S, S - {short}, device=x.device, dtype=x.dtype)
    rows_kernel[(B * S,)](x, y, S, BLOCK=triton.next_power_of_2(S))
    return y, x.shape[2:]
"""


def test_a_leading_slice_names_sizes_but_leaves_the_rank_open() -> None:
    # each row reads S elements of `x` at a stride of S: past the end of `x` if x had only the
    # two dimensions the probe gives it, but `x.shape[:2]` (and `x.shape[2:]`) leave its rank
    # open, so its extent is not judged: no error on `x_ptr`, and no stand-in note either
    clean = _check(_HEAD_SLICE.format(short=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]


def test_a_tensor_sized_from_a_leading_slice_is_judged() -> None:
    # `y` is allocated from the sliced sizes, one column short: its overrun is found
    bug = _check(_HEAD_SLICE.format(short=1))
    assert not _value_notes(bug), _value_notes(bug)
    errors = _errors(bug, "MB001") + _errors(bug, "MB002")
    assert [f for f in errors if "`y_ptr`" in f.message], [(f.code, f.severity, f.message) for f in bug]
    assert not [f for f in errors if "`x_ptr`" in f.message], [(f.code, f.message) for f in errors]


_SPREAD_SLICE = """
def pooled(do, batch, seq):
    B, T, H, D = (batch, seq, *do.shape[-2:])
    dx = torch.empty(B * T * H, D + {pad}, device=do.device, dtype=do.dtype)
    rows_kernel[(B * T * H,)](dx, dx, D + {pad}, BLOCK=triton.next_power_of_2(D))
    return dx
"""


def test_a_spread_trailing_slice_fills_the_names() -> None:
    clean = _check(_SPREAD_SLICE.format(pad=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]
    bug = _check(_SPREAD_SLICE.format(pad=0), mask="None")
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB001"), [(f.code, f.severity, f.message) for f in bug]


_CTX_SHAPE = """
class Rows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits):
        ctx.input_shape = logits.shape
        B, L, N = ctx.input_shape
        y = torch.empty(B, L, N, device=logits.device, dtype=logits.dtype)
        rows_kernel[(B * L + {fextra},)](logits, y, N, BLOCK=triton.next_power_of_2(N))
        ctx.save_for_backward(logits)
        return y

    @staticmethod
    def backward(ctx, dy):
        (logits,) = ctx.saved_tensors
        B, L, N = ctx.input_shape
        dx = torch.empty_like(logits)
        rows_kernel[(B * L + {bextra},)](dy, dx, N, BLOCK=triton.next_power_of_2(N))
        return dx
"""


def test_a_shape_stored_on_ctx_is_read_back_in_forward_and_backward() -> None:
    clean = _check(_CTX_SHAPE.format(fextra=0, bextra=0))
    assert not _value_notes(clean), _value_notes(clean)
    assert not _failing(clean), [(f.code, f.message) for f in clean]


def test_a_bug_behind_a_shape_stored_on_ctx_is_found_in_forward() -> None:
    bug = _check(_CTX_SHAPE.format(fextra=1, bextra=0))
    assert not _value_notes(bug), _value_notes(bug)
    assert _errors(bug, "MB001"), [(f.code, f.severity, f.message) for f in bug]


_CTX_BACKWARD = """
class Rows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits):
        ctx.input_shape = logits.shape
        ctx.save_for_backward(logits)
        return logits * 2

    @staticmethod
    def backward(ctx, dy):
        (logits,) = ctx.saved_tensors
        B, L, N = ctx.input_shape
        dx = torch.empty_like(logits)
        rows_kernel[(B * L + {extra},)](logits, dx, N, BLOCK=triton.next_power_of_2(N))
        return dx
"""


def test_a_shape_stored_on_ctx_is_read_back_in_backward() -> None:
    # the backward reads `ctx.input_shape` as its forward stored it (binder_ctx.py replays the
    # forward; launcher_reads gives `logits` the three dimensions the backward unpacks): the
    # sizes are known. The saved tensor itself is one the backward never measures, so its
    # bounds stay unjudged (a hint naming that), never an error resting on a guessed extent
    for extra in (0, 1):
        out = _check(_CTX_BACKWARD.format(extra=extra))
        assert not _value_notes(out), _value_notes(out)
        assert not _failing(out), [(f.code, f.message) for f in out]
        hints = [f for f in out if f.code == "MB003" and f.severity == Severity.HINT]
        assert hints and all("does not state the shape" in f.message for f in hints), [
            (f.code, f.severity, f.message) for f in out
        ]


_STORED_IN_BRANCH = """
def maybe(x, holder):
    if holder.ready:
        holder.n = x.shape[0]
    n = holder.n
    y = torch.empty_like(x)
    rows_kernel[(1,)](x, y, n, BLOCK=128)
"""


def test_an_attribute_stored_on_one_side_of_an_unknown_branch_stays_unknown() -> None:
    out = _check(_STORED_IN_BRANCH)
    assert _value_notes(out), [(f.code, f.message) for f in out]

