"""Scale tags for online softmax.

A value produced by `exp(x - m)` is *relative to* the max `m`: its scale tag is m's token. The
factor `exp(m_old - m_new)` is a `Rescale(old, new)`: multiplying a value of scale m_old by it
gives scale m_new. Adding two values of different scales, dividing by a sum of another scale, or
rescaling from the wrong max are tag mismatches (NU002/NU005), decided by identity of tokens,
not by looking at numbers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

_serial = itertools.count()


@dataclass(eq=False)
class MaxToken:
    """A (running) max: which data (lineage ids) it covers. `empty`: the -inf initial value."""

    covers: frozenset[int]
    empty: bool = False
    serial: int = 0

    def __post_init__(self) -> None:
        self.serial = next(_serial)


@dataclass(eq=False)
class Rescale:
    old: MaxToken
    new: MaxToken


@dataclass(eq=False)
class Normalized:
    """A value already divided by its running sum, at `node`."""

    node: Any
    smap: Any


@dataclass(eq=False)
class Inverse:
    """`1 / l` with `l` a sum relative to the max `of`: a value relative to the same max times
    it is normalized, as `value / l` is (a Sinkhorn row step: `p * (1.0 / sum(p))`)."""

    of: MaxToken


ANY = "any"  # zeros: compatible with every scale


def is_token(s: Any) -> bool:
    return isinstance(s, MaxToken)


def outside_logit(
    shape: tuple[int, ...], max_shape: tuple[int, ...], lineage: frozenset[int], m: MaxToken
) -> bool:
    """`exp(s - m)` where `s` is one logit per row of the max (no axis of its own beyond m's, so
    not a block of scores the max reduces) that the max never covered: an attention sink or a
    bias added to the normalizer only (`l += exp(sink - m)`). It is taken relative to m, as the
    softmax needs; it is no score block read against a stale max (NU002 judges score tiles)."""
    return bool(lineage) and not lineage <= m.covers and len(shape) <= len(max_shape) and shape == max_shape


def merge_max(
    a: MaxToken | None, b: MaxToken | None, lineage_a: frozenset[int], lineage_b: frozenset[int]
) -> MaxToken:
    covers = (a.covers if a else lineage_a) | (b.covers if b else lineage_b)
    return MaxToken(covers)


def newer(a: Any, b: Any) -> Any:
    if is_token(a) and is_token(b):
        return a if a.serial >= b.serial else b
    return a if is_token(a) else b


def add_scales(sa: Any, sb: Any) -> tuple[Any, str | None, Any]:
    """Scale of a + b, and a problem: (result, kind or None, normalized site). A reciprocal
    added to anything is no longer one (`1 / l + eps` scales nothing as `1 / l` does)."""
    sa = None if isinstance(sa, Inverse) else sa
    sb = None if isinstance(sb, Inverse) else sb
    if sa in (None, ANY):
        return sb, None, None
    if sb in (None, ANY) or sa is sb:
        return sa, None, None
    if isinstance(sa, Rescale) or isinstance(sb, Rescale):
        return sa if not isinstance(sa, Rescale) else sb, None, None
    if isinstance(sa, Normalized) and isinstance(sb, Normalized):
        return sa, None, None  # two values each over its own sum (a Sinkhorn column sum)
    if isinstance(sa, Normalized):
        return sb, "normalized", sa
    if isinstance(sb, Normalized):
        return sa, "normalized", sb
    return newer(sa, sb), "mismatch", None


def mul_scales(sa: Any, sb: Any) -> tuple[Any, str | None, Any]:
    """Scale of a * b where one side may be a Rescale factor."""
    if isinstance(sb, Rescale) and not isinstance(sa, Rescale):
        sa, sb = sb, sa
    if isinstance(sa, Rescale):
        r = sa
        if sb in (None, ANY) or sb is r.old:
            return r.new, None, None
        if isinstance(sb, Normalized):
            return r.new, "normalized", sb
        if isinstance(sb, MaxToken):
            return r.new, "mismatch", None
        return r.new, None, None
    if sa in (None, ANY):
        return sb, None, None
    return sa, None, None
