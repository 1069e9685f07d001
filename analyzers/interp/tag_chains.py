"""Tag chains: how the operands' tags join on an elementwise result (`merge_tags`).

A key's tags form a chain K, K', K'', ...: a value computed from data at two different
coordinates along K (a recurrent state meeting a new row each iteration) carries one link per
coordinate. An operand's tag joins the first link of its chain, from its own key on up to the
first free key, that it agrees with (`tags.merge`), or starts a new link at that free key.

That join made a loop-carried value's chain grow with the square of the loop's length, and
each merge walk it: the operands of `u = x - h; h = h + u` carry the state's links in different
orders (u has x's row first), so a tag of u started its walk past the link of h it equals,
met none it agreed with, and was appended as a copy; every iteration copied every shifted link
(64 iterations of fla's fused recurrent kernels: 2,143 links holding 69 distinct arrays, each
merge walking them). Two changes, and nothing else:

- a tag that would start a new link while a link of its chain is identical to it (the same
  coordinate in every lane, no coordinate in the same lanes, the same dtype, bit for bit) is
  not added: a chain holds each coordinate once and grows by the coordinates a loop meets;
- the walk tries only the links that agree with the tag in its first lane with a coordinate
  (or have none there): a chain is indexed by the coordinates its links have in the lanes that
  joining tags sample, so a join costs the links it may merge with, not the chain's length.
  Every link the old walk tried and this one does not would have failed to merge (they
  conflict in that lane), so which link a tag merges into, and the merge, are as before.

Why the findings stay: a dropped tag was a copy of a link the result keeps, and no link's
contents change. The rules read a chain by its key's base (`k.rstrip("'")`) and ask whether
some link holds a coordinate (`access_checks._check_store_tags`, `asserts`): a copy adds
nothing. Readers by exact key (`tl.where`, pointer plus offset, `rule_same_store`) can see a
later link under another key than before; the corpora and the real packages, checked whole
(`docs/realworld.md`, ninth session, tagjoin), give the same findings with the same witnesses.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp import tags as tagops

if TYPE_CHECKING:
    from collections.abc import Callable

    from argus.analyzers.interp.values import Val


def merge_tags(
    vals: list[Val], shape: tuple[int, ...], bc: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
) -> dict[str, np.ndarray]:
    """The operands' tags on the result (`bc` broadcasts a tag to `shape`): each tag joins its
    key's chain as the module docstring says."""
    tags: dict[str, np.ndarray] = {}
    chains: dict[str, _Chain] = {}
    for v in vals:
        if not v.tags:
            continue
        if not tags:  # the first operand's keys are distinct: its tags are the start
            tags = {k: arr if arr.shape == shape else bc(arr, shape) for k, arr in v.tags.items()}
            continue
        for k, arr in v.tags.items():
            arrb = arr if arr.shape == shape else bc(arr, shape)
            a = tags.get(k)
            if a is None:
                tags[k] = arrb  # (a chain no tag joined yet needs no index: built on a join)
                chain = chains.get(k.rstrip("'"))
                if chain is not None:
                    chain.put(len(k) - len(chain.base), arrb)
            elif a is not arrb:  # (the same array: the walk's first link merges into itself)
                base = k.rstrip("'")
                chain = chains.get(base)
                if chain is None:
                    chain = chains[base] = _Chain(tags, base)
                chain.join(len(k) - len(base), arrb)
    return tags


class _Lane:
    """Where a chain's links have which coordinate in one lane: position lists (ascending) by
    coordinate, and of the links without one there."""

    def __init__(self) -> None:
        self.at: dict[Any, list[int]] = {}
        self.none: list[int] = []

    def add(self, pos: int, x: Any) -> None:
        insort(self.none if x != x else self.at.setdefault(x, []), pos)

    def remove(self, pos: int, x: Any) -> None:
        where = self.none if x != x else self.at[x]
        del where[bisect_left(where, pos)]


class _Chain:
    """One key's chain in the result under construction (links at positions 0, 1, ... =
    keys K, K', ...), indexed by the coordinate each link has in the lanes that joining tags
    sample: the links a tag may merge with (those agreeing with it in its sampled lane, or
    without a coordinate there) and its copies are found without a walk through the others."""

    def __init__(self, tags: dict[str, np.ndarray], base: str) -> None:
        self.tags, self.base = tags, base
        self.positions = {len(k) - len(base) for k in tags if k.startswith(base) and k.rstrip("'") == base}
        self.top = max(self.positions) + 1
        self.lanes: dict[int, _Lane] = {}

    def key(self, pos: int) -> str:
        return self.base + "'" * pos

    def join(self, start: int, arrb: np.ndarray) -> None:
        """`arrb`, carried under the key at `start`, joins the first link from `start` on
        (up to the first free key) that it merges with, or starts a link at that free key
        unless it is a copy of a link of the chain."""
        lane = _sample_lane(arrb)
        end = self._free_from(start)
        if lane is None:  # (no coordinate: it merges with the first link it meets)
            self._merge_at(start, arrb)
            return
        index = self._lane(lane[0])
        agreeing = index.at.get(lane[1], [])
        for pos in _ascending_in(agreeing, index.none, start, end):
            if self._merge_at(pos, arrb):
                return
        if not any(_identical(self.tags[self.key(p)], arrb) for p in agreeing):
            self.tags[self.key(end)] = arrb
            self.put(end, arrb)

    def _merge_at(self, pos: int, arrb: np.ndarray) -> bool:
        a = self.tags[self.key(pos)]
        m = tagops.merge(a, arrb)
        if m is None:
            return False
        if m is not a:
            self.tags[self.key(pos)] = m
            self.put(pos, m, a)
        return True

    def put(self, pos: int, arr: np.ndarray, old: np.ndarray | None = None) -> None:
        """Index the link now at `pos` (in place of `old`, or a new one)."""
        for lane, index in self.lanes.items():
            if old is not None:
                index.remove(pos, old.flat[lane])
            index.add(pos, arr.flat[lane])
        if old is None:
            self.positions.add(pos)
            self.top = max(self.top, pos + 1)

    def _lane(self, lane: int) -> _Lane:
        index = self.lanes.get(lane)
        if index is None:
            index = self.lanes[lane] = _Lane()
            for pos in sorted(self.positions):
                index.add(pos, self.tags[self.key(pos)].flat[lane])
        return index

    def _free_from(self, start: int) -> int:
        """The first position from `start` on that holds no link (where the walk ends)."""
        if len(self.positions) == self.top:  # (no gap: the chain's end)
            return max(start, self.top)
        pos = start
        while pos in self.positions:
            pos += 1
        return pos


def _ascending_in(a: list[int], b: list[int], lo: int, hi: int) -> list[int]:
    """The positions of the ascending lists `a` and `b` in [lo, hi), ascending."""
    got = a[bisect_left(a, lo) : bisect_left(a, hi)]
    if b:
        got = sorted(got + b[bisect_left(b, lo) : bisect_left(b, hi)])
    return got


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    """The same coordinates in the same lanes, bit for bit (two -0.0/0.0 or NaN payloads that
    differ count as different: such a tag joins as it did before, which is always safe)."""
    if a is b:
        return True
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _sample_lane(arr: np.ndarray) -> tuple[int, Any] | None:
    """(flat index, coordinate) of the first lane of `arr` that has a coordinate; None if none."""
    if arr.size == 0:
        return None
    x = arr.flat[0]
    if x == x:  # (not NaN)
        return 0, x
    have = np.flatnonzero(~np.isnan(arr))
    return (int(have[0]), arr.flat[int(have[0])]) if have.size else None
