"""A size relation a caller refuses before calling the launch's function (model/binder_callers.py,
falsefix). flag-gems' `pixel_shuffle` calls `_check_and_get_shapes_strides`, which raises unless
`C_in % r**2 == 0`, and then `_launch_pixel_shuffle_kernel(x, out, r)`; the probes bound the
launch function's own parameters freely and ran C_in = 5 with r = 2, which the code never lets
through (false MB001, GR001, GR002 on the real file). As for a caller's `if` around the call
(cause L6), the launch's bounds are not judged; a caller that refuses nothing leaves the launch
unguarded. (This small kernel shows no finding without the guard either: the guard is tested
where it is found, the real file by benchmarks/realworld_subset.py.)"""

from __future__ import annotations

from argus.analyzers import Severity, check_source
from argus.analyzers.model.binder_callers import _guard_in_module

_SHUFFLE = """
import torch
import triton
import triton.language as tl


@triton.jit
def shuffle_kernel(
    in_ptr, out_ptr, C_out, R, H_out, W_out, s_n, s_c, s_h, s_w, o_n, o_c, o_h, o_w, n_elements, BLOCK: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    wo = offs % W_out
    tmp = offs // W_out
    ho = tmp % H_out
    tmp = tmp // H_out
    co = tmp % C_out
    no = tmp // C_out
    cin = co * (R * R) + (ho % R) * R + (wo % R)
    val = tl.load(in_ptr + no * s_n + cin * s_c + (ho // R) * s_h + (wo // R) * s_w, mask=mask, other=0)
    tl.store(out_ptr + no * o_n + co * o_c + ho * o_h + wo * o_w, val, mask=mask)


def _check(x, r):
    if r <= 0:
        raise RuntimeError("r must be > 0")
    N, C_in, H, W = x.shape
    if C_in % (r * r) != 0:
        raise RuntimeError("channels not divisible")
    return N, C_in // (r * r), H * r, W * r


def _launch(x: torch.Tensor, out: torch.Tensor, r: int):
    N, C_in, H, W = x.shape
    C_out = C_in // (r * r)
    H_out, W_out = H * r, W * r
    n_elements = out.numel()
    s_n, s_c, s_h, s_w = x.stride()
    o_n, o_c, o_h, o_w = out.stride()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK"]),)  # noqa: E731
    shuffle_kernel[grid](x, out, C_out, r, H_out, W_out, s_n, s_c, s_h, s_w, o_n, o_c, o_h, o_w, n_elements, BLOCK=256)


def shuffle(x, r):
    {check}
    out = torch.empty((N, C_out, H_out, W_out), dtype=x.dtype, device=x.device)
    _launch(x, out, r)
    return out
"""

_CHECKED = "N, C_out, H_out, W_out = _check(x, r)"
_UNCHECKED = "N, C_in, H, W = x.shape; C_out, H_out, W_out = C_in // (r * r), H * r, W * r"


def _guard(check: str) -> str | None:
    source = _SHUFFLE.format(check=check).encode()
    return _guard_in_module(source, "_launch")


def test_a_size_the_caller_refuses_before_the_call_guards_the_launch() -> None:
    assert _guard(_CHECKED) == "not (C_in % (r * r) != 0)"


def test_a_refusal_written_in_the_caller_itself_guards_it_too() -> None:
    own = "N, C_in, H, W = x.shape\n    if C_in % 4 != 0:\n        raise ValueError(C_in)\n    " + _UNCHECKED
    assert _guard(own) == "not (C_in % 4 != 0)"


def test_a_caller_that_refuses_nothing_leaves_the_launch_unguarded() -> None:
    assert _guard(_UNCHECKED) is None


def test_the_guarded_launch_has_no_error() -> None:
    found = check_source(_SHUFFLE.format(check=_CHECKED), "t.py")
    assert [f.code for f in found if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"] == []
