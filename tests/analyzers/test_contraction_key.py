"""DF003's contraction key does not depend on the order tags were made in (fgprec6).

flag-gems' `flashmla_sparse.py` got a DF003 ("SKV=0 counted 2 times") under some
PYTHONHASHSEED values and nothing under others: `tl.where` built its tags from a set union, and
the first tag varying along the contraction axis was the one counted. The gathered tile carries
both the index position (`K`) and the gathered row (`SKV`); the index position is the one the
program walks once (interp/contraction_key.py).
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
from argus.analyzers.interp.contraction_key import contraction_order
from argus.analyzers.interp.ops_linalg import _contraction_keys
from argus.analyzers.interp.ops_math import _where
from argus.analyzers.interp.values import Val


def _tile(order: list[str], index_tags: frozenset[str] = frozenset()) -> Val:
    """A 4x4 tile whose tags in `order` all vary along the last axis."""
    cols = np.tile(np.arange(4.0), (4, 1))
    return Val(np.zeros((4, 4)), "fp32", tags={k: cols.copy() for k in order}, index_tags=index_tags)


def test_the_key_order_is_the_same_for_every_order_of_the_tags() -> None:
    gathered = frozenset({"K"})
    seen = {tuple(_contraction_keys(_tile(list(p), gathered), -1)) for p in itertools.permutations(["SKV", "K", "D"])}
    assert seen == {("K", "D", "SKV")}


def test_a_position_of_a_loaded_index_comes_before_the_gathered_row() -> None:
    assert contraction_order(["SKV", "K"], frozenset({"K", "SQ"})) == ["K", "SKV"]
    assert contraction_order(["K", "SKV"], frozenset()) == ["K", "SKV"]


def test_where_keeps_the_tag_order_of_its_operands() -> None:
    x = _tile(["SKV", "K"])
    y = _tile(["M", "K"])
    cond = Val(np.ones((4, 4), dtype=bool), "int1")
    out = _where(SimpleNamespace(address_only=False), [cond, x, y], {}, None)  # type: ignore[arg-type]
    assert list(out.tags) == ["SKV", "K", "M"]
