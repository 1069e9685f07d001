"""A random generator's seed whose draws steer (issue 12, item 3: flag-gems' randperm shuffle).

`r = tl.philox(seed, c0, ...)` is a draw of a documented type and range for any seed, and the
interpreter draws it from the counters' shape alone, so a kernel that shuffles by the draws
(`argsort(r % BLOCK)`, an index `r % BLOCK` into its own block) steers on a value any run may
take, not on the seed: the seed is a data-only parameter, picked and named in the sizes, and
the kernel is analyzed (before: the draw made the seed steer an address, a stand-in and an
AR001 note). A seed or offset used in an address itself still steers.
"""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.data_params import data_only_params
from argus.analyzers.model.random_draws import ALL_POSITIONS, Draws
from argus.analyzers.model.scan import scan_kernel

_SHUFFLE = """
import torch
import triton
import triton.language as tl
from somewhere import seed_and_offset


@triton.jit
def draw(seed, offset, offs):
    c0 = offset.to(tl.uint32) + offs
    z = c0 * 0
    r0, r1, r2, r3 = tl.philox(seed, c0, z, z, z)
    return r0


@triton.jit
def shuffle_kernel(x_ptr, y_ptr, n, seed, offset, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    r = draw(seed, offset, pid * BLOCK + offs)
    j = (r % BLOCK).to(tl.int32)
    base = pid * BLOCK
    v = tl.load(x_ptr + base + offs, mask=base + offs < {bound}, other=0.0)
    tl.store(y_ptr + base + {target}, v, mask=base + {target} < n)


def shuffle(x):
    n = x.numel()
    y = torch.empty_like(x)
    seed, offset = seed_and_offset(n)
    shuffle_kernel[(triton.cdiv(n, 128),)](x, y, n, seed, offset, BLOCK=128)
    return y
"""


def _check(bound: str = "n", target: str = "j") -> list:
    return check_source(_SHUFFLE.format(bound=bound, target=target), "shuffle.py")


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def test_a_seed_whose_draws_steer_the_store_is_data_only() -> None:
    findings = _check()
    assert not _notes(findings), _notes(findings)
    failing = [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]
    assert not failing, [(f.code, f.message) for f in failing]


def test_a_seeded_bug_beside_the_draws_is_found() -> None:
    findings = _check(bound="n + 1")
    mb = [f for f in findings if f.code == "MB001" and f.severity == Severity.ERROR]
    assert mb, [(f.code, f.severity, f.message) for f in findings]


def test_a_seed_used_in_an_address_itself_still_steers() -> None:
    import ast

    tree = ast.parse(_SHUFFLE.format(bound="n", target="j"))
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    kernel = funcs["shuffle_kernel"]
    scan = scan_kernel(kernel, [a.arg for a in kernel.args.args], {"draw": funcs["draw"]})
    assert {"seed", "offset"} <= data_only_params(kernel, scan)
    steering = ast.parse(_SHUFFLE.format(bound="n", target="j + offset % 2"))
    funcs = {f.name: f for f in steering.body if isinstance(f, ast.FunctionDef)}
    kernel = funcs["shuffle_kernel"]
    scan = scan_kernel(kernel, [a.arg for a in kernel.args.args], {"draw": funcs["draw"]})
    only = data_only_params(kernel, scan)
    assert "seed" in only and "offset" not in only, only


@pytest.mark.parametrize(
    ("helper", "drawn"),
    [
        ("def f(seed, off):\n    return tl.rand(seed, off)\n", frozenset({0, 1})),
        ("def f(x, p, seed, off):\n    r = tl.rand(seed, off)\n    return tl.where(r > p, x, 0.0)\n", frozenset({2, 3})),
        ("def f(x, seed):\n    return x + seed\n", None),
    ],
    ids=["all", "data-kept", "no-draw"],
)
def test_the_positions_a_helper_only_draws_from(helper: str, drawn: frozenset[int] | None) -> None:
    import ast

    func = ast.parse(helper).body[0]
    assert isinstance(func, ast.FunctionDef)
    assert Draws({"f": func}).drawn_from("f") == drawn
    assert Draws({}).drawn_from("philox") is ALL_POSITIONS
