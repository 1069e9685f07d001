"""Idempotent stores across programs (GR002): what each element last received.

Two programs that store to one element race only if what they store can differ. A kernel whose
tail lanes wrap (`oh = idx // OW % OH` with no mask) or whose short tile wraps its rows
(`offs_m % M`) makes a later program store again, at an element another program wrote, the very
value that program stored: the same data read from the same coordinates. The element ends the
same whatever the order, so it is not a race. This module keeps, per plain-stored element, the
value and coordinate tags stored there, so that a later store can be compared with it. Only
values known in full count: an address-only program's floats are stand-ins, and undefined or
unknown lanes say nothing, so such a store never excuses a repeat (and is recorded as unknown).
Synthesized contents differ from element to element, so equal data read from different
elements is not mistaken for a repeat; the tags must agree as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from argus.analyzers.interp.ops_core import bc
from argus.analyzers.interp.values import Val, is_float

MAX_TRACKED_ELEMENTS = 1 << 20


@dataclass
class StoredValues:
    """The last plain store's value at each element of one tensor (NaN where unknown)."""

    data: np.ndarray
    known: np.ndarray  # whether `data`/`tags` at the element hold a value known in full
    tags: dict[str, np.ndarray] = field(default_factory=dict)


def _comparable(v: Val, address_only: bool) -> bool:
    """Whether the stored tile's lanes are values known in full (not stand-ins or unknowns)."""
    return not (v.unknown or v.undef is not None or (address_only and is_float(v.dtype)))


def record_stored(
    log: dict[int, StoredValues],
    index: int,
    extent: int,
    offs: np.ndarray,
    ok: np.ndarray,
    v: Val,
    shape: tuple[int, ...],
    address_only: bool,
) -> None:
    """Remember what this plain store wrote at each of its elements (`offs`, the lanes `ok`).
    The record is dense (a value and each tag per element of the tensor), so a tensor past
    `MAX_TRACKED_ELEMENTS` is not recorded: its repeats are never excused, as before this
    rule, and a probe's memory stays bounded by its tiles rather than by its tensors."""
    if extent > MAX_TRACKED_ELEMENTS:
        return
    rec = log.get(index)
    if rec is None:
        rec = log[index] = StoredValues(np.full(extent, np.nan), np.zeros(extent, dtype=bool))
    if not _comparable(v, address_only):
        rec.known[offs] = False
        return
    rec.data[offs] = np.broadcast_to(v.data, shape)[ok].astype(np.float64, copy=False)
    rec.known[offs] = True
    for k in set(rec.tags) | set(v.tags):
        arr = rec.tags.get(k)
        if arr is None:
            arr = rec.tags[k] = np.full(extent, np.nan)
        arr[offs] = bc(v.tags[k], shape)[ok] if k in v.tags else np.nan


def repeats_stored(
    log: dict[int, StoredValues],
    index: int,
    offs: np.ndarray,
    ok: np.ndarray,
    v: Val,
    shape: tuple[int, ...],
    address_only: bool,
) -> np.ndarray:
    """Per lane of `offs`: True where this store writes exactly what the element already holds
    from an earlier plain store (equal data, equal coordinate tags, both known in full)."""
    rec = log.get(index)
    if rec is None or not _comparable(v, address_only):
        return np.zeros(len(offs), dtype=bool)
    data = np.broadcast_to(v.data, shape)[ok].astype(np.float64, copy=False)
    same = rec.known[offs] & _equal(data, rec.data[offs])
    for k in set(rec.tags) | set(v.tags):
        mine = bc(v.tags[k], shape)[ok] if k in v.tags else np.full(len(offs), np.nan)
        theirs = rec.tags[k][offs] if k in rec.tags else np.full(len(offs), np.nan)
        same &= _equal(np.asarray(mine, dtype=np.float64), theirs)
    return same


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality where NaN equals NaN (an absent tag, a stored NaN)."""
    return (a == b) | (np.isnan(a) & np.isnan(b))
