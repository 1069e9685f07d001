"""speed6's cuts compute what the code they replaced computed: each replaced definition is kept
here as the reference and the new code is pinned to it."""

from __future__ import annotations

import ast
import itertools
import random

import numpy as np
from argus.analyzers.interp import garbage
from argus.analyzers.interp.ops import module_attribute
from argus.analyzers.interp.ops_core import (
    _combine_pad,
    _promote,
    derive,
    follow_nan,
    merge_tags,
    or_masks,
    promote,
)
from argus.analyzers.interp.values import FLOAT_TYPES, INT_TYPES, DType, Val


def _old_derive(vals: list[Val], data: np.ndarray, dtype: str) -> Val:
    """ops_core.derive before speed6."""
    shape = data.shape
    undef = None
    any_tags = any_pad = grows = runtime = False
    constexpr = True
    index_tags = lineage = loaded_from = frozenset()
    overflow_site = nan_site = unstable_exp = unknown = undef_site = None
    nan_from = None
    srcs = set()
    for v in vals:
        if v.undef is not None:
            undef = or_masks(undef, v.undef, shape)
        undef_site = undef_site if undef_site is not None else v.undef_site
        any_tags = any_tags or bool(v.tags)
        any_pad = any_pad or v.pad is not None
        if v.index_tags:
            index_tags = index_tags | v.index_tags
        if v.lineage:
            lineage = lineage | v.lineage
        if v.loaded_from:
            loaded_from = loaded_from | v.loaded_from
        grows = grows or v.grows
        runtime = runtime or v.runtime
        constexpr = constexpr and v.constexpr
        overflow_site = overflow_site if overflow_site is not None else v.overflow_site
        if nan_site is None and v.nan_site is not None:
            nan_site, nan_from = v.nan_site, v
        unstable_exp = unstable_exp if unstable_exp is not None else v.unstable_exp
        unknown = unknown or v.unknown
        if v.src:
            srcs.add(v.src)
    ts = [v.terms for v in vals if v.terms is not None]
    out = Val(
        data,
        dtype,
        tags=merge_tags(vals, shape) if any_tags else {},
        index_tags=index_tags,
        undef=undef,
        pad=_combine_pad(vals, shape) if any_pad else None,
        lineage=lineage,
        grows=grows,
        runtime=runtime,
        constexpr=constexpr,
        loaded_from=loaded_from,
        overflow_site=overflow_site,
        nan_site=nan_site if nan_from is None else follow_nan(nan_from, data),
        unstable_exp=unstable_exp,
        unknown=unknown,
        undef_site=undef_site,
        terms=frozenset().union(*ts) if ts else None,
        held=garbage.elementwise(vals, shape),
    )
    if len(srcs) == 1 and dtype in FLOAT_TYPES:
        out.src = srcs.pop()
    return out


def _random_val(rng: random.Random, shape: tuple[int, ...]) -> Val:
    pick = rng.random
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return Val(
        data,
        rng.choice(["fp32", "int32", "bf16"]),
        undef=(data % 2 == 0) if pick() < 0.3 else None,
        undef_site=rng.choice([None, "u1", "u2"]),
        index_tags=frozenset(rng.sample(["M", "N", "K"], rng.randint(0, 2))),
        lineage=frozenset(rng.sample(range(5), rng.randint(0, 2))),
        loaded_from=frozenset(rng.sample(range(5), rng.randint(0, 2))),
        grows=pick() < 0.5,
        runtime=pick() < 0.5,
        constexpr=pick() < 0.5,
        overflow_site=rng.choice([None, "o1", "o2"]),
        unstable_exp=rng.choice([None, "e1"]),
        unknown=rng.choice([None, "", "why"]),
        terms=rng.choice([None, frozenset({1}), frozenset({1, 2}), frozenset()]),
        src=rng.choice([None, "", "a_ptr", "b_ptr"]),
    )


def _fields(v: Val) -> dict:
    out = {}
    for k, x in v.__dict__.items():
        out[k] = x.tolist() if isinstance(x, np.ndarray) else x
    return out


def test_derive_matches_the_reference_on_random_operands() -> None:
    rng = random.Random(6)
    for _ in range(3000):
        shape = rng.choice([(), (4,), (2, 4)])
        vals = [_random_val(rng, shape) for _ in range(rng.randint(1, 3))]
        data = np.zeros(shape)
        dtype = rng.choice(["fp32", "int32"])
        assert _fields(derive(vals, data, dtype)) == _fields(_old_derive(vals, data, dtype))


def test_promote_remembered_matches_promote_on_every_pair() -> None:
    names = sorted(FLOAT_TYPES | INT_TYPES)
    for da, db in itertools.product(names, names):
        for flags in itertools.product([False, True], repeat=4):
            a = Val(np.zeros(() if flags[1] else (2,)), da, constexpr=flags[0])
            b = Val(np.zeros(() if flags[3] else (2,)), db, constexpr=flags[2])
            assert promote(a, b) == _promote(a, b)
            assert promote(a, b) == _promote(a, b)  # the remembered answer


def test_module_attributes_remembered_but_not_shared() -> None:
    assert module_attribute("tl.float32", ast.Name()) == DType("fp32")
    a, b = module_attribute("tl.arange", ast.Name()), module_attribute("tl.arange", ast.Name())
    assert a == b == ("tl", "arange") and a is not b  # `is` between two reads stays False
    p, q = module_attribute("math.pi", ast.Name()), module_attribute("math.pi", ast.Name())
    assert isinstance(p, Val) and p is not q and p.item() == q.item()
