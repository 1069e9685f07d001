"""Held garbage: lanes whose value a reduction or a `tl.dot` spoiled, and the finding that
stands only once such a lane is kept.

Undefined lanes of a masked load without `other=` (MB004), or padding that is not the
neutral element of the reduction it enters (DF003), spoil the output lanes of the reduction or
dot they are mixed into. Whether that matters is decided later: a lane that a store's mask
leaves out, or that `tl.where` replaces, is never seen (the query rows past the end of a
chunk, whose sums a store masked by `o_t < T` drops). So the event is not emitted where the
garbage is mixed in: it is held, with the output lanes it spoiled, on the value that carries
them (`Val.held`), and emitted at that first site once a spoiled lane is kept (a store or an
atomic with its mask on there, or a branch decided by it).

Two kinds travel: undefined garbage, which may be NaN or inf and so survives a product with 0
(`0 * NaN` is NaN), and the finite wrong value non-neutral padding leaves, which an exact zero
it is multiplied by (a padded 0, a `tl.where(..., 0)` lane) cancels.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext
    from argus.analyzers.interp.facts import Fact
    from argus.analyzers.interp.values import Val

MAX_PARTS = 8  # sites one value tells apart; more share the last part's mask (all still emitted)


@dataclass(frozen=True, eq=False)
class Held:
    """Lanes (`mask`, in the carrying value's shape or broadcastable to it) spoiled at one
    site (`site`: the event's kind and place, as the fact sink keys it), the events to emit
    once a lane is kept with the dedupe key each is reported under (`facts`: one, or more when
    parts past MAX_PARTS share a mask), and whether the spoiled value is finite (padding)
    rather than possibly NaN (undefined)."""

    mask: np.ndarray
    facts: tuple[tuple[Fact, Any], ...]
    site: Any
    finite: bool

    @property
    def fact(self) -> Fact:
        return self.facts[0][0]

    def on(self, mask: np.ndarray) -> Held:
        return Held(mask, self.facts, self.site, self.finite)


class _Capture:
    """A stand-in sink that keeps the one event `interp.fact` builds instead of recording it."""

    def __init__(self) -> None:
        self.facts: list[Fact] = []

    def add(self, fact: Fact) -> None:
        self.facts.append(fact)


def pend(
    interp: OpContext,
    kind: str,
    node: ast.AST,
    lanes: np.ndarray,
    finite: bool,
    key: Any = None,
    **data: Any,
) -> Held | None:
    """The event `interp.fact(kind, node, **data)` would emit, held on `lanes` (the output
    lanes it spoils) instead of emitted now; None where it spoils no lane."""
    lanes = np.asarray(lanes, dtype=bool)
    if not lanes.any():
        return None
    saved, cap = interp.sink, _Capture()
    interp.sink = cap  # type: ignore[assignment]
    try:
        interp.fact(kind, node, **data)
    finally:
        interp.sink = saved
    if not cap.facts:
        return None
    return Held(lanes, ((cap.facts[0], key),), cap.facts[0].key, finite)


def add(v: Val, part: Held | None) -> None:
    """Add one held event to a value (the output of the reduction or dot that made it)."""
    if part is not None:
        v.held = _merged([*v.held, part], v.data.shape)


def _merged(parts: list[Held], shape: tuple[int, ...]) -> tuple[Held, ...]:
    """Parts of the same site joined (their masks or-ed; the first part's events kept: the
    sink keeps one event per site anyway), broadcast to `shape`. Past MAX_PARTS sites the
    rest share the last part: its mask is the union, it holds all their events, and it is
    finite only if all of them are (no garbage is lost, some lanes are over-approximated)."""
    out: dict[Any, Held] = {}
    for p in parts:
        m = np.broadcast_to(p.mask, shape) if p.mask.shape != shape else p.mask
        old = out.get(p.site)
        out[p.site] = p.on(m) if old is None else old.on(old.mask | m)
    merged = list(out.values())
    if len(merged) > MAX_PARTS:
        rest = merged[MAX_PARTS - 1 :]
        mask = np.logical_or.reduce([p.mask for p in rest])
        facts = tuple(f for p in rest for f in p.facts)
        merged = [*merged[: MAX_PARTS - 1], Held(mask, facts, rest[0].site, all(p.finite for p in rest))]
    return tuple(merged)


def elementwise(vals: list[Val], shape: tuple[int, ...]) -> tuple[Held, ...]:
    """A lane computed from spoiled lanes is spoiled."""
    parts = [p for v in vals for p in v.held]
    if not parts:
        return ()
    return _merged(parts, shape)


def cancel_by_zero(out: Val, a: Val, b: Val, divisor: bool = False) -> None:
    """`a * b`: a finite wrong value times an exact zero (a padded 0, a lane `tl.where` set to
    0), where the zero is itself not spoiled or undefined, contributes nothing; so does a clean
    zero divided by a wrong value that is not 0 (`divisor`: `a / b`)."""
    if not out.held or not any(p.finite for p in out.held):
        return
    shape = out.data.shape
    zero = np.zeros(shape, dtype=bool)
    for v in (a,) if divisor else (a, b):
        z = np.broadcast_to(v.data == 0, shape)
        if divisor:
            z = z & np.broadcast_to(b.data != 0, shape)
        if v.undef is not None:
            z = z & ~np.broadcast_to(v.undef, shape)
        for p in v.held:
            z = z & ~np.broadcast_to(p.mask, shape)
        zero |= z
    if not zero.any():
        return
    kept = []
    cancelled = np.zeros(shape, dtype=bool)
    for p in out.held:
        if p.finite:
            cancelled |= np.broadcast_to(p.mask, shape) & zero
        m = np.broadcast_to(p.mask, shape) & ~zero if p.finite else p.mask
        if m.any():
            kept.append(p.on(m))
    out.held = tuple(kept)
    if cancelled.any() and out.data.dtype.kind == "f":
        # the spoiled factor is finite by this kind's nature, so the lane is 0; a NaN there
        # is the probe's random inputs (`log` of a negative), not the kernel's, and would
        # keep the next product from seeing the zero
        out.data = np.where(cancelled & np.isnan(out.data), 0.0, out.data).astype(out.data.dtype)


def select(cond: np.ndarray, x: Val, y: Val, shape: tuple[int, ...]) -> tuple[Held, ...]:
    """`tl.where(cond, x, y)`: each lane keeps what the side it comes from holds."""
    parts = [p.on(np.broadcast_to(p.mask, shape) & cond) for p in x.held]
    parts += [p.on(np.broadcast_to(p.mask, shape) & ~cond) for p in y.held]
    parts = [p for p in parts if p.mask.any()]
    return _merged(parts, shape) if parts else ()


def mapped(v: Val, fn: Any) -> tuple[Held, ...]:
    """A shape operation (transpose, reshape, broadcast, gather) moves the spoiled lanes too."""
    out = []
    for p in v.held:
        m = fn(np.broadcast_to(p.mask, v.data.shape))
        out.append(p.on(np.asarray(m, dtype=bool)))
    return tuple(out)


def reduced(v: Val, axis: int | None, keep: bool) -> tuple[Held, ...]:
    """A reduction's output lane is spoiled where any lane of its slice was."""
    out = []
    for p in v.held:
        m = np.broadcast_to(p.mask, v.data.shape)
        r = m.any(axis=axis, keepdims=keep) if axis is not None else np.asarray(m.any())
        if r.any():
            out.append(p.on(np.asarray(r)))
    return tuple(out)


def scanned(v: Val, axis: int, reverse: bool) -> tuple[Held, ...]:
    """A scan carries a spoiled lane into every later one."""
    out = []
    for p in v.held:
        m = np.broadcast_to(p.mask, v.data.shape)
        m = np.flip(m, axis) if reverse else m
        m = np.logical_or.accumulate(m, axis=axis)
        out.append(p.on(np.flip(m, axis) if reverse else m))
    return tuple(out)


def through_dot(a: Val, b: Val, shape: tuple[int, ...]) -> tuple[Held, ...]:
    """`a @ b`: an output lane is spoiled where a spoiled lane of its row of `a` (column of
    `b`) meets a lane of the other operand that is not an exact, clean zero; undefined garbage
    spoils its whole row (column) whatever it meets."""
    out = []
    for v, other, side in ((a, b, "a"), (b, a, "b")):
        if not v.held:
            continue
        nz = np.asarray(other.data != 0, dtype=np.float64)
        if other.undef is not None:
            nz = np.maximum(nz, np.broadcast_to(other.undef, other.data.shape))
        for p in other.held:
            nz = np.maximum(nz, np.broadcast_to(p.mask, other.data.shape))
        for p in v.held:
            m = np.broadcast_to(p.mask, v.data.shape)
            if side == "a":
                r = (m.astype(np.float64) @ (nz if p.finite else np.ones_like(nz))) > 0
            else:
                r = ((nz if p.finite else np.ones_like(nz)) @ m.astype(np.float64)) > 0
            if r.any():
                out.append(p.on(np.broadcast_to(r, shape)))
    return _merged(out, shape) if out else ()


def keep(interp: OpContext, v: Val, lanes: np.ndarray | None = None) -> None:
    """A store or branch keeps `v` on `lanes` (all when None): every held event with a spoiled
    lane there is emitted, once per dedupe key."""
    if not v.held:
        return
    for p in v.held:
        m = np.broadcast_to(p.mask, v.data.shape)
        if lanes is not None:
            m = np.broadcast_to(m, lanes.shape) & lanes
        if not m.any():
            continue
        for fact, key in p.facts:
            if key is None or interp.sink.first_time(key):
                interp.sink.add(fact)
