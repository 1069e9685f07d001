"""The interpreter's per-statement cuts of `speed4` (issue 12, checker speed): each computes what
the code it replaced computed, faster. The replaced definitions are kept here as the reference:
`TensorInfo.unravel` without its divisions by stride 1, `merge_tags` trying each link of a tag
chain with `tags.merge` (the new one, `interp/tag_chains.py`, tries only the links that agree
with the tag in one sampled lane, and adds no copy of a link), and `first_unbound` without its check of every name read.
Each test pins the new code to the reference on inputs made to reach every branch, and the
tag-chain cut also on whole checks of a kernel whose state gains one link per loop iteration."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from argus.analyzers import unbound_names
from argus.analyzers.interp import ops_core, tag_chains
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.values import TensorInfo, Val
from kernel_checks import everything as _findings


def _reference_unravel(t: TensorInfo, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    offs = np.asarray(offsets, dtype=np.int64)
    coords = np.zeros(offs.shape + (len(t.shape),), dtype=np.int64)
    valid = (offs >= 0) & (offs < max(t.extent, 0))
    rest = np.where(valid, offs, 0)
    for d in t._unravel_order:
        c, rest = np.divmod(rest, max(t.strides[d], 1))
        coords[..., d] = c
        valid &= c < t.shape[d]
    valid &= rest == 0
    return coords, valid


def _layouts() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Shapes with strides of every kind: contiguous, transposed, padded rows (gaps), a size-1
    dimension anywhere, a zero stride, an empty dimension, a 0-d tensor."""
    return [
        ((), ()),
        ((7,), (1,)),
        ((7,), (3,)),
        ((7,), (0,)),
        ((5, 6), (6, 1)),
        ((5, 6), (1, 5)),
        ((5, 6), (8, 1)),
        ((1, 6), (6, 1)),
        ((5, 1), (1, 1)),
        ((4, 1, 3), (3, 3, 1)),
        ((2, 3, 4, 5), (60, 20, 5, 1)),
        ((2, 3, 4, 5), (1, 2, 6, 24)),
        ((3, 0, 2), (2, 2, 1)),
        ((2, 3, 1, 4), (16, 4, 4, 1)),
    ]


@pytest.mark.parametrize(("shape", "strides"), _layouts())
def test_unravel_gives_the_reference_coordinates_and_validity(shape: tuple, strides: tuple) -> None:
    t = TensorInfo(0, "x", shape, strides, tuple(f"S{i}" for i in range(len(shape))), "fp32")
    top = max(t.extent, 1)
    for offs in (
        np.arange(-3, top + 4),
        np.arange(-3, top + 4)[::-1].reshape(-1, 1) * np.ones((1, 2), dtype=np.int64),
        np.asarray(top // 2),
        np.asarray([], dtype=np.int64),
    ):
        got, want = t.unravel(offs), _reference_unravel(t, offs)
        assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (shape, strides, offs)


def _reference_merge_tags(vals: list[Val], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    tags: dict[str, np.ndarray] = {}
    for v in vals:
        for k, arr in v.tags.items():
            arrb = ops_core.bc(arr, shape)
            k2 = k
            while k2 in tags:
                m = tagops.merge(tags[k2], arrb)
                if m is not None:
                    tags[k2] = m
                    break
                k2 += "'"
            else:
                tags[k2] = arrb
    return tags


def _same_tags(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> bool:
    return list(got) == list(want) and all(
        got[k].dtype == want[k].dtype
        and got[k].shape == want[k].shape
        and np.array_equal(got[k], want[k], equal_nan=True)
        for k in got
    )


def _chain(rows: list[np.ndarray], key: str = "T") -> dict[str, np.ndarray]:
    return {key + "'" * i: r for i, r in enumerate(rows)}


def _val(tags: dict[str, np.ndarray], shape: tuple[int, ...] = (4,)) -> Val:
    return Val(np.zeros(shape), "fp32", tags=tags)


def test_a_tag_joins_the_same_link_of_a_chain_as_before() -> None:
    rows = [np.full(4, float(i)) for i in range(6)]
    nan_row = np.array([np.nan, 2.0, np.nan, 2.0])  # agrees with link 2 where it has coordinates
    cases = {
        "a new link at the end": np.full(4, 9.0),
        "the first link": np.full(4, 0.0),
        "a middle link": np.full(4, 3.0),
        "a link it agrees with only where both have coordinates": nan_row,
        "no coordinate at all (agrees with the first)": np.full(4, np.nan),
        "no coordinate in its first lane": np.array([np.nan, 4.0, 4.0, 4.0]),
        "a link's zero of the other sign": np.full(4, -0.0),
    }
    for what, new in cases.items():
        vals = [_val(_chain(rows)), _val({"T": new, "D": np.arange(4.0)})]
        got = ops_core.merge_tags(vals, (4,))
        assert _same_tags(got, _reference_merge_tags(vals, (4,))), what


def test_a_chain_link_that_is_the_same_array_stays_itself() -> None:
    rows = [np.full(4, float(i)) for i in range(5)]
    vals = [_val(_chain(rows)), _val({"T": rows[3]})]
    got = ops_core.merge_tags(vals, (4,))
    assert got["T'''"] is rows[3]
    assert _same_tags(got, _reference_merge_tags(vals, (4,)))


def test_chains_with_gaps_broadcasts_and_other_dtypes_merge_as_before() -> None:
    rows = [np.full((1, 4), float(i)) for i in range(5)]
    gap = {"T": rows[0], "T'": rows[1], "T'''": rows[3], "T''''": rows[4]}  # T'' missing
    ints = _chain([np.full(4, i, dtype=np.int64) for i in range(4)])
    mixed = {**_chain([np.full(4, float(i)) for i in range(4)]), "T''": np.full(4, 2, dtype=np.int64)}
    for what, first, second, shape in (
        ("a gap in the chain", gap, {"T": np.full((1, 4), 7.0)}, (1, 4)),
        ("operands broadcast to the result", _chain(rows), {"T'": np.full((3, 1), 2.0)}, (3, 4)),
        ("integer links", ints, {"T": np.full(4, 5, dtype=np.int64)}, (4,)),
        ("links of mixed dtypes", mixed, {"T": np.full(4, 9.0)}, (4,)),
        ("a key of the chain's middle", _chain([np.full(4, float(i)) for i in range(6)]), {"T''": np.full(4, 4.0)}, (4,)),
    ):
        vals = [_val(first, shape), _val(second, shape)]
        got = ops_core.merge_tags(vals, shape)
        assert _same_tags(got, _reference_merge_tags(vals, shape)), what


def _copies(tags: dict[str, np.ndarray]) -> int:
    """How many links repeat an array of their chain, bit for bit."""
    return len(tags) - len({(k.rstrip("'"), a.dtype.str, a.shape, a.tobytes()) for k, a in tags.items()})


def test_random_chains_merge_as_before() -> None:
    """Where the reference adds no second copy of a link (`interp/tag_chains.py` no longer
    does), the result is the reference's; the rest is pinned in test_tag_chains.py."""
    rng = np.random.default_rng(7)
    compared = 0
    for _ in range(300):
        shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        n = int(rng.integers(1, 9))
        rows = [rng.integers(0, 3, shape).astype(np.float64) for _ in range(n)]
        for r in rows:
            r[rng.random(shape) < 0.3] = np.nan
        others = {k: rng.integers(0, 3, shape).astype(np.float64) for k in ("T", "T'", "D")}
        vals = [_val(_chain(rows), shape), _val(others, shape)]
        want = _reference_merge_tags(vals, shape)
        if _copies(want) > _copies(vals[0].tags):
            continue  # (the reference added a copy)
        compared += 1
        assert _same_tags(ops_core.merge_tags(vals, shape), want)
    assert compared > 200


# a recurrent state: `h` meets a new row of x each iteration, so its tag T gains one link each
RECURRENT = """import torch
import triton
import triton.language as tl


@triton.jit
def decay_scan_kernel(x_ptr, y_ptr, T, D, BD: tl.constexpr):
    i_d = tl.program_id(0)
    o_d = i_d * BD + tl.arange(0, BD)
    h = tl.zeros([BD], dtype=tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + t * D + o_d, mask=o_d < D, other=0.0)
        h = h * 0.5 + x
        tl.store(y_ptr + t * D + o_d, h, mask=o_d < D)
    tl.store(y_ptr + T * D + o_d, h)


def decay_scan(x):
    T, D = x.shape
    y = torch.empty_like(x)
    decay_scan_kernel[(triton.cdiv(D, 32),)](x, y, T, D, BD=32)
    return y
"""


def test_a_kernel_whose_state_gains_a_link_per_iteration_keeps_its_findings(monkeypatch) -> None:
    joined = []
    original = tag_chains._Chain.join
    monkeypatch.setattr(tag_chains._Chain, "join", lambda *a: joined.append(1) or original(*a))
    new = _findings(RECURRENT)
    # (T only counts iterations, so its probes run 5 to 8 of them: 16 joins in all)
    assert len(joined) > 10, "no tag joined a chain by its index: the test no longer covers it"
    monkeypatch.setattr(ops_core, "merge_tags", _reference_merge_tags)  # (only derive() calls it)
    assert new == _findings(RECURRENT)
    assert any(code == "MB002" for code, *_ in new)  # the row past the end is still found


def _reference_first_unbound(func: ast.FunctionDef, known: set[str], env: dict | None) -> ast.Name | None:
    scope = unbound_names.Scope(unbound_names.tensor_names(func), env)
    found = unbound_names._unbound_among(unbound_names.compiled_reads(func.body, scope), func, known, lambda: frozenset())
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)


KERNELS = """
def bound_everywhere(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if BLOCK > 16:
        y = tl.load(x_ptr + offs, mask=offs < n)
    else:
        y = tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(x_ptr + offs, y)

def unbound_in_one_arm(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if BLOCK > 16:
        y = tl.load(x_ptr + offs + typo_offset)
    else:
        y = tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(x_ptr + offs, y)

def unbound_always(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) + missing_base
    tl.store(x_ptr + offs, offs)

def unbound_after_return(x_ptr, n):
    return
    tl.store(x_ptr, never_compiled)
"""


def test_first_unbound_answers_as_the_walk_over_the_compiled_reads() -> None:
    known = {"tl", "triton", "range"}
    for func in ast.parse(KERNELS).body:
        assert isinstance(func, ast.FunctionDef)
        for env in (None, {"BLOCK": 32, "n": 4}, {"BLOCK": 8, "n": 4}):
            got = unbound_names.first_unbound(func, known, lambda: frozenset(), env)
            want = _reference_first_unbound(func, known, env)
            assert (got and (got.id, got.lineno)) == (want and (want.id, want.lineno)), (func.name, env)
    names = {f.name: f for f in ast.parse(KERNELS).body if isinstance(f, ast.FunctionDef)}
    assert unbound_names.first_unbound(names["unbound_in_one_arm"], known, lambda: frozenset(), {"BLOCK": 32}).id == "typo_offset"
    assert unbound_names.first_unbound(names["unbound_always"], known, lambda: frozenset()).id == "missing_base"
    assert "never_compiled" in unbound_names.names_read(names["unbound_after_return"])


def test_the_kept_answers_are_the_uncached_ones_and_belong_to_their_tree() -> None:
    one, two = (ast.parse(KERNELS).body[1] for _ in range(2))
    assert isinstance(one, ast.FunctionDef) and isinstance(two, ast.FunctionDef)
    first = unbound_names.kernel_bindings(one)
    assert first is unbound_names.kernel_bindings(one)
    assert first == unbound_names._kernel_bindings(two) and {"offs", "y", "x_ptr", "n", "BLOCK"} <= first
    assert unbound_names.tensor_names(one) == unbound_names._tensor_names(two)
    assert unbound_names.tensor_names(one) is unbound_names.tensor_names(one)
    assert unbound_names.kernel_bindings(two) is not first  # another tree of the same text: its own
    assert "typo_offset" in unbound_names.names_read(one) and "typo_offset" not in first


def test_synthesized_contents_are_read_at_the_clipped_offsets() -> None:
    """`np.take(..., mode="clip")` replaced `arr[np.clip(offsets, 0, len(arr) - 1)]`: the same
    elements for offsets inside, below and past the tensor, in any layout of the offsets."""
    from types import SimpleNamespace

    from argus.analyzers.interp.contents import SynthesizedMemory, _random_floats

    floats = TensorInfo(3, "x", (5, 7), (8, 1), ("M", "N"), "fp32")
    ints = TensorInfo(4, "idx", (9,), (1,), ("T",), "int32")
    memory = SynthesizedMemory(SimpleNamespace(policies={}), SimpleNamespace(args={}), set(), set(), set())
    offsets = np.arange(-4, 50).reshape(6, 9)
    for offs in (offsets, offsets.T, np.broadcast_to(np.arange(-2, 12), (3, 14)), np.asarray(6), offsets[:0]):
        drawn = _random_floats(floats)
        assert np.array_equal(memory.at(floats, offs), drawn[np.clip(offs, 0, len(drawn) - 1)])
        table = memory.at(ints, np.arange(ints.extent))  # (made on the first read, then kept)
        want = table[np.clip(offs, 0, len(table) - 1)]
        got = memory.at(ints, offs)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_constant_selector_is_told_as_np_isin_told_it() -> None:
    """`_constant_selector`'s test of 0s and 1s, once `np.isin(data, (0, 1))`, now two equalities."""
    from argus.analyzers.interp.ops_arith import _constant_selector

    for data, dtype in (
        (np.arange(2), "int32"),
        (np.arange(4).reshape(2, 2) % 2, "int32"),
        (np.arange(3), "int32"),
        (np.array([1, 1]), "int32"),
        (np.array([-1, 0, 1]), "int64"),
        (np.array([True, False]), "int1"),
        (np.zeros((2, 3), dtype=np.int64), "int32"),
    ):
        v = Val(data, dtype)
        want = bool(np.isin(data, (0, 1)).all()) and bool((data == 0).any())
        assert _constant_selector(v) == want, data
