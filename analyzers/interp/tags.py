"""Tag arrays: float arrays of coordinates where NaN means "no coordinate" (a lane that was
masked off or out of bounds, whose address says nothing about the element it stands for)."""

from __future__ import annotations

import numpy as np

# the tag of a value moved from one lane of a pair to the other (a bitonic sort's
# compare-and-swap sums each pair with one lane zeroed, `interp/ops_reduce.py`): an address
# computed from such values (a permutation the kernel sorted) does not stand for its own lane
MOVED = "~moved"


def varies(arr: np.ndarray, axis: int) -> bool:
    """Does the coordinate change along `axis` among the lanes that have one?"""
    if arr.ndim == 0 or arr.shape[axis] <= 1 or arr.strides[axis] == 0:
        return False  # a broadcast along the axis cannot vary along it
    mx = np.fmax.reduce(arr, axis=axis)
    mn = np.fmin.reduce(arr, axis=axis)
    return np.count_nonzero(mx > mn) > 0  # (count_nonzero: a third of .any()'s overhead)


def varies_right(arr: np.ndarray, axis: int) -> bool:
    """`varies` for a negative axis of the tile `arr` broadcasts to, without broadcasting it:
    a tag with fewer dimensions is constant along the ones it lacks."""
    return arr.ndim >= -axis and varies(arr, axis)


def collapse(arr: np.ndarray, axis: int, keep: bool = True) -> np.ndarray:
    """The coordinate of each slice along `axis` (for a tag constant along it)."""
    r = np.fmax.reduce(arr, axis=axis)
    return np.expand_dims(r, axis) if keep else r


def merge(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """One tag from two that agree wherever both have a coordinate; None when they conflict."""
    if a is b:
        return a
    # fmax/fmin skip NaN: where only one side has a coordinate both give it; where both do,
    # they differ exactly when the coordinates conflict
    mx = np.fmax(a, b)
    if np.count_nonzero(mx > np.fmin(a, b)):
        return None
    return mx


def differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Lanes where both have a coordinate and they differ."""
    return ~np.isnan(a) & ~np.isnan(b) & (a != b)
