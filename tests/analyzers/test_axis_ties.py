"""Issue 12, rule 1, for rank-3+ tensors the launcher never unpacks, and for launches whose
callers fix a size relation (causes L1 and L6 of docs/realworld.md, branch `lprec`).

An unnamed axis of a tensor is related to the same axis of another tensor only where the
kernel ties them: the same index walks both (`off_h`), or indices bounded by the same size
(`t < T`), or the kernel's block pointer states the extent. Untied, the axis stays unknown and
the tensor's bounds are not judged. A launch inside a helper that every caller calls only
under a size relation (`if rows % block == 0:`) is not judged on sizes the relation excludes.
Each case has a correct form (clean) and a seeded bug that what the code states still exposes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from argus.analyzers import Severity, check_source, describe_at
from argus.analyzers.model.binder_callers import caller_guard
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.scan_axes import UNIT, axis_index_keys
from argus.analyzers.model.scan_index import index_subtrees

_TIED = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_k(q_ptr, k_ptr, o_ptr, T, sqt, sqh, skt, skh, sot, soh, BLOCK_T: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    h = tl.program_id(1)
    t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.arange(0, D)
    m = t[:, None] < T
    q = tl.load(q_ptr + t[:, None] * sqt + h * sqh + d[None, :], mask=m, other=0.0)
    k = tl.load(k_ptr + t[:, None] * skt + h * skh + d[None, :]{k_mask})
    tl.store(o_ptr + t[:, None] * sot + h * soh + d[None, :], q + k, mask=m)


def add(q, k):
    T, H, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(T, 16), H)
    add_k[grid](q, k, o, T, q.stride(0), q.stride(1), k.stride(0), k.stride(1), o.stride(0), o.stride(1),
                BLOCK_T=16, D=D)
    return o
"""

_UNTIED = """
import torch
import triton
import triton.language as tl


@triton.jit
def mix_k(x_ptr, h_ptr, o_ptr, C, sxn, sxh, sxc, shn, shi, shj, son, soh, soc,
          HC: tl.constexpr, BLOCK_C: tl.constexpr):
    n = tl.program_id(0)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cm = c < C
    for i in tl.static_range(0, HC):
        acc = tl.zeros([BLOCK_C], dtype=tl.float32)
        for j in tl.static_range(0, HC):
            w = tl.load(h_ptr + n * shn + i * shi + j * shj)
            x = tl.load(x_ptr + n * sxn + j * sxh + c * sxc, mask=cm, other=0.0)
            acc += w * x
        tl.store(o_ptr + n * son + i * soh + c * soc, acc, mask=cm)


def mix(x, h):
    N, HC, C = x.shape
    out = torch.empty_like(x)
    grid = (N, triton.cdiv(C, 32))
    mix_k[grid](x, h, out, C, x.stride(0), x.stride(1), x.stride(2), h.stride(0), h.stride(1), h.stride(2),
                out.stride(0), out.stride(1), out.stride(2), HC=HC, BLOCK_C=32)
    return out
"""

_CALLER_FIXTURE = Path(__file__).resolve().parents[1] / "corpus_realworld" / "launcher_flag_caller.py"


def _bad(text: str) -> list[tuple[str, int]]:
    findings = check_source(text, "t.py")
    # MB003 (int32 offsets) aside: its severity has rules of its own
    return [(f.code, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_tied_axes_correct_is_clean() -> None:
    assert _bad(_TIED.format(k_mask=", mask=m, other=0.0")) == []


def test_tied_axes_keep_the_missing_mask_found() -> None:
    """`k` is never unpacked, but its rows are walked by `t` (as q's, bounded by T), its heads
    by `h`, its unit stride by `d`: it has q's shape by the kernel's code, and the unmasked
    load past T is out of bounds."""
    text = _TIED.format(k_mask="")
    assert ("MB001", _line_of(text, "k = tl.load")) in _bad(text)


def test_untied_axis_is_not_judged() -> None:
    """`h` ((N, HC, HC) by the caller) is never unpacked; its last axis is walked by `j`, x's by
    `c`: nothing ties it to C, so it is not given C's size (main reported h's read at j < HC as
    out of bounds of a C-long axis)."""
    assert _bad(_UNTIED) == []


def test_axis_keys_name_the_index_and_its_bound() -> None:
    func = ast.parse(_TIED.format(k_mask="")).body[3]
    assert isinstance(func, ast.FunctionDef)
    index_subtrees(func)
    nodes = list(ast.walk(func))
    keys = axis_index_keys(
        [n for n in nodes if isinstance(n, ast.Assign)],
        [n for n in nodes if isinstance(n, ast.Call)],
        [n for n in nodes if isinstance(n, ast.Compare)],
        [n for n in nodes if isinstance(n, ast.For)],
        {"q_ptr", "k_ptr", "o_ptr"},
        {"T", "sqt", "sqh", "skt", "skh", "sot", "soh"},
    )
    assert {"=t", "<T"} <= keys["k_ptr"]["skt"]
    assert "=h" in keys["k_ptr"]["skh"] and "=d" in keys["k_ptr"][UNIT]
    assert keys["q_ptr"]["sqt"] & keys["k_ptr"]["skt"]


def test_caller_fixed_flag_is_clean() -> None:
    """The fixture's unmasked launch runs only under `if even:` (rows % block_r == 0 and
    block_c == n_cols); main reported its unmasked read on ragged sizes (MB001)."""
    assert _bad(_CALLER_FIXTURE.read_text(encoding="utf-8")) == []


def test_an_unguarded_caller_keeps_the_unmasked_launch_judged() -> None:
    text = _CALLER_FIXTURE.read_text(encoding="utf-8")
    text = text.replace('if __name__ == "__main__":', 'def any_size(x, w, out):\n    _launch_even(x, w, out, 8, 16)\n\n\nif __name__ == "__main__":')
    assert ("MB001", _line_of(text, "x = tl.load(x_ptr + x_off)")) in _bad(text)


def test_caller_guard_names_the_relation() -> None:
    text = _CALLER_FIXTURE.read_text(encoding="utf-8")
    tree = ast.parse(text)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_launch_even")
    call = next(n for n in ast.walk(helper) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    src = text.encode()
    starts = [0]
    for line in src.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    site = LaunchSite(call, helper, helper.body, SourceMap(src, starts, 0, 0))
    assert caller_guard(site) == "even"


_STAND_IN = """
import torch
import triton
import triton.language as tl
from elsewhere import flat_size


@triton.jit
def row_norm(out, v, M, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for base in range(0, N, BLOCK):
        cols = base + tl.arange(0, BLOCK)
        x = tl.load(v + row * N + cols, mask=cols < N, other=0.0)
        acc += x * x
    tl.store(out + row{off}, tl.sqrt(tl.sum(acc, axis=0)))


def rownorm(v):
    M = v.shape[0]
    N = flat_size(v)
    out = torch.empty((M,), device=v.device, dtype=torch.float32)
    row_norm[(M,)](out, v, M, N, BLOCK=32)
    return out
"""


def test_stand_in_bound_leaves_its_tensor_unjudged() -> None:
    """`N = flat_size(v)` (a function outside the package) is not computed: the probes use a stand-in, and `v`'s
    reads, bounded by N, are not judged against a guess (cause L2; the AR001 note names N;
    main reported an MB001 on `v` from the stand-in)."""
    text = _STAND_IN.format(off="")
    findings = check_source(text, "t.py")
    assert _bad(text) == []
    assert any(f.code == "AR001" and "`N`" in f.message for f in findings)


def test_stand_in_bound_keeps_other_tensors_judged() -> None:
    """The store into `out` does not depend on N: an off-by-one row is still found."""
    text = _STAND_IN.format(off=" + 1")
    assert ("MB002", _line_of(text, "tl.store(out + row")) in _bad(text)


def test_hover_says_why_the_bounds_are_not_judged() -> None:
    text = _CALLER_FIXTURE.read_text(encoding="utf-8")
    at = text.index("tl.load(x_ptr + x_off)") + len("tl.load(")
    hover = describe_at(text, len(text[:at].encode()))
    assert hover is not None and "only where its callers find `even`" in hover
