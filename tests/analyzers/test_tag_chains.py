"""Loop-carried tag chains (`interp/tag_chains.py`, issue 12): a chain holds each coordinate at
most once, so a recurrent state's chain grows by one link per iteration and a join costs a few
link visits, where the old join added a copy of every link the operands held in another order
(quadratic links, each merge walking them all). Counted in links and link visits, not time.
The old join is kept here (`_old_merge_tags`) to pin the new one to it: equal wherever the old
one adds no copy, and equal but for the copy where it does; and whole checks of small recurrent
kernels find the same findings with either."""

from __future__ import annotations

import numpy as np
from argus.analyzers.interp import ops_core, tag_chains
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.values import Val
from kernel_checks import everything as _findings


def _old_merge_tags(vals: list[Val], shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The join before tag_chains.py: from its own key on, the first link it merges with, else a
    new link at the first free key (a copy of a link it never reached included)."""
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


def _val(tags: dict[str, np.ndarray], shape: tuple[int, ...]) -> Val:
    return Val(np.zeros(shape), "fp32", tags=tags)


def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> bool:
    return list(got) == list(want) and all(
        got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k], equal_nan=True) for k in got
    )


def _delta_rule_state(steps: int, merge) -> dict[str, np.ndarray]:  # noqa: ANN001
    """The tags of `h` after `steps` iterations of a delta-rule recurrence, each elementwise op
    joined by `merge`: `v -= sum(h * k[:, None], 0); h += k[:, None] * v[None, :]` with k and v
    the rows of step t (tags T = t, and K or V along their axis), h of shape (K, V) = (4, 8)."""
    shape, kk, vv = (4, 8), np.arange(4.0).reshape(4, 1), np.arange(8.0).reshape(1, 8)
    h: dict[str, np.ndarray] = {}
    for t in range(steps):
        row = np.full((1, 1), float(t))
        k = {"T": row, "K": kk}
        hk = merge([_val(h, shape), _val(k, shape)], shape)
        summed = {key: a[:1] for key, a in hk.items() if not tagops.varies(a, 0)}  # sum over K
        v = merge([_val({"T": row, "V": vv}, (1, 8)), _val(summed, (1, 8))], (1, 8))
        kv = merge([_val(k, shape), _val(v, (1, 8))], shape)
        h = merge([_val(h, shape), _val(kv, shape)], shape)
    return h


def _count_visits(monkeypatch) -> list[int]:  # noqa: ANN001
    """Counts each link a join looks at: a merge tried, or a link entered in a lane's index."""
    visits = [0]
    add, merge = tag_chains._Lane.add, tagops.merge

    def counted_add(*a):  # noqa: ANN002, ANN202
        visits[0] += 1
        return add(*a)

    def counted_merge(*a):  # noqa: ANN002, ANN202
        visits[0] += 1
        return merge(*a)

    monkeypatch.setattr(tag_chains._Lane, "add", counted_add)
    monkeypatch.setattr(tag_chains.tagops, "merge", counted_merge)
    return visits


def test_a_long_recurrence_keeps_one_link_per_step_and_joins_in_few_visits(monkeypatch) -> None:
    old = _delta_rule_state(16, _old_merge_tags)
    assert sum(k.startswith("T") for k in old) > 60, "the old join no longer copies: the case is moot"
    visits = _count_visits(monkeypatch)
    _delta_rule_state(100, ops_core.merge_tags)
    at_100, visits[0] = visits[0], 0
    steps = 200
    h = _delta_rule_state(steps, ops_core.merge_tags)
    chain = [k for k in h if k.rstrip("'") == "T"]
    assert len(chain) == steps  # one link per coordinate met, each once
    assert sorted(float(h[k].flat[0]) for k in chain) == [float(t) for t in range(steps)]
    # each op copies and indexes the chain once (linear in its length) and each join tries
    # one or two links: twice the steps, four times the visits. A walk from each tag's key
    # to the chain's end (the join before) made it eight times (1.4 million visits at 200)
    assert visits[0] < 4.5 * at_100
    assert visits[0] < 3 * steps**2


def test_a_join_without_copies_is_the_old_join() -> None:
    shape = (2, 3)
    first = {"T": np.full(shape, 0.0), "T'": np.full(shape, 1.0), "K": np.arange(3.0) * np.ones(shape)}
    nan_row = np.array([[np.nan, 1.0, 1.0], [1.0, np.nan, 1.0]])
    for second in (
        {"T": np.full(shape, 1.0)},  # merges with the second link
        {"T": np.full(shape, 2.0), "K": np.arange(3.0) * np.ones(shape)},  # a new link; K joins K
        {"T'": nan_row},  # agrees with T' where it has coordinates
        {"T'": np.full(shape, 5.0), "T": np.full(shape, np.nan)},
        {"T''": np.full(shape, 0.0)},  # starts past the chain's end: a new link (not a copy: T'')
    ):
        vals = [_val(first, shape), _val(second, shape)]
        assert _same(ops_core.merge_tags(vals, shape), _old_merge_tags(vals, shape)), second


def test_a_tag_the_walk_never_reaches_is_not_added_again() -> None:
    shape = (4,)
    rows = [np.full(shape, float(t)) for t in range(3)]
    h = {"T": rows[0], "T'": rows[1], "T''": rows[2]}
    shifted = {"T": rows[2], "T'": rows[0], "T''": rows[1]}  # the same links, the last first
    vals = [_val(h, shape), _val(shifted, shape)]
    old = _old_merge_tags(vals, shape)
    assert list(old) == ["T", "T'", "T''", "T'''", "T''''"]  # copies of rows 0 and 1 appended
    got = ops_core.merge_tags(vals, shape)
    assert _same(got, {k: old[k] for k in ("T", "T'", "T''")})
    # a copy that differs in one lane's coordinate, or only in the lanes without one, is new
    holed = rows[0].copy()
    holed[3] = np.nan
    for other in (np.array([0.0, 0.0, 0.0, 7.0]), holed):
        vals = [_val(h, shape), _val({"T'''": rows[2], "T''''": other}, shape)]
        assert _same(ops_core.merge_tags(vals, shape), _old_merge_tags(vals, shape))


# a recurrence in the style of the fused recurrent kernels: u meets x's row before the state,
# h meets its own links before u's, so the operands hold the state's links in different orders;
# the state stored a row past the output's end is a real finding (MB002)
DELTA_SCAN = """import torch
import triton
import triton.language as tl


@triton.jit
def delta_scan_kernel(x_ptr, y_ptr, T, D, BD: tl.constexpr):
    i_d = tl.program_id(0)
    o_d = i_d * BD + tl.arange(0, BD)
    m_d = o_d < D
    h = tl.zeros([BD], dtype=tl.float32)
    for t in range(T):
        x = tl.load(x_ptr + t * D + o_d, mask=m_d, other=0.0)
        u = x - h * 0.5
        h = h * 0.9 + u
        tl.store(y_ptr + t * D + o_d, h, mask=m_d)
    tl.store(y_ptr + T * D + o_d, h)


def delta_scan(x):
    T, D = x.shape
    y = torch.empty_like(x)
    delta_scan_kernel[(triton.cdiv(D, 32),)](x, y, T, D, BD=32)
    return y
"""


def test_a_recurrent_kernel_keeps_its_findings_and_its_chains_short(monkeypatch) -> None:
    longest = [0]
    real = ops_core.merge_tags

    def measured(vals, shape):  # noqa: ANN001, ANN202
        out = real(vals, shape)
        longest[0] = max(longest[0], len(out))
        return out

    monkeypatch.setattr(ops_core, "merge_tags", measured)
    new = _findings(DELTA_SCAN)
    new_longest = longest[0]
    longest[0] = 0
    real = _old_merge_tags
    old = _findings(DELTA_SCAN)
    assert new == old
    assert any(code == "MB002" for code, *_ in new)
    assert longest[0] > 2 * new_longest  # the old join's copies: the case still covers them
