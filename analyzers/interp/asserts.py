"""Checking the author's tag assertions (analyzers/tag_asserts.py) against the values in scope."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.ops_core import tag_keys
from argus.analyzers.interp.values import Ptr, Val

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext
    from argus.analyzers.tag_asserts import TagAssertion


def _coords_along(v: Val | Ptr, axis: int) -> dict[str, np.ndarray]:
    """Tag key -> the coordinate of each slice along `axis`, for tags that vary along it."""
    if isinstance(v, Ptr):
        t = v.tensor
        coords, valid = t.unravel(np.asarray(v.offsets))
        tags = {k: np.where(valid, coords[..., d], np.nan).astype(float) for d, k in enumerate(tag_keys(t))}
        shape = v.offsets.shape
    else:
        tags = {k: np.broadcast_to(np.asarray(a, dtype=float), v.shape) for k, a in v.tags.items()}
        shape = v.shape
    if not shape or not -len(shape) <= axis < len(shape):
        return {}
    axis %= len(shape)
    out = {}
    for k, arr in tags.items():
        if tagops.varies(arr, axis):
            others = tuple(i for i in range(arr.ndim) if i != axis)
            out[k] = np.fmax.reduce(arr, axis=others) if others else arr
    return out


def check_assertion(interp: OpContext, a: TagAssertion, st: ast.stmt, env: dict[str, Any]) -> None:
    if a.kind == "bad":
        interp.fact("tag-assert-bad", st, text=a.text)
        return
    left = env.get(a.left)
    if not isinstance(left, Val | Ptr):
        interp.fact("tag-assert-bad", st, text=f"{a.text} (`{a.left}` is not a tile here)")
        return
    if a.kind == "eq":
        right = env.get(a.right)
        if not isinstance(right, Val | Ptr):
            interp.fact("tag-assert-bad", st, text=f"{a.text} (`{a.right}` is not a tile here)")
            return
        lc, rc = _coords_along(left, a.left_axis), _coords_along(right, a.right_axis)
        if not lc or not rc:
            return  # no coordinate varies along one of the axes at this probe: nothing to compare
        for lk, lv in lc.items():
            for rk, rv in rc.items():
                if (
                    lk.rstrip("'") == rk.rstrip("'")
                    and lv.shape == rv.shape
                    and not tagops.differ(lv, rv).any()
                ):
                    return
        lk, lv = next(iter(lc.items()))
        rk, rv = next(iter(rc.items()))
        j = (
            int(np.argmax(tagops.differ(lv, rv)))
            if lv.shape == rv.shape and tagops.differ(lv, rv).any()
            else 0
        )
        interp.fact(
            "tag-assert",
            st,
            text=a.text,
            left=f"{a.left}[{a.left_axis}]",
            right=f"{a.right}[{a.right_axis}]",
            left_tag=f"{lk}={_fmt(lv, j)}",
            right_tag=f"{rk}={_fmt(rv, j)}",
            lane=j,
        )
        return
    for axis, want in enumerate(a.axes):
        got = [k.rstrip("'") for k in _coords_along(left, axis)]
        if got and want.rstrip("'") not in got:  # nothing varies (a one-element probe): no verdict
            interp.fact(
                "tag-assert",
                st,
                text=a.text,
                left=f"{a.left}[{axis}]",
                right=want,
                left_tag=", ".join(got) or "no coordinate",
                right_tag=want,
                lane=0,
            )
            return


def _fmt(arr: np.ndarray, j: int) -> str:
    if j >= arr.size or np.isnan(arr.reshape(-1)[j]):
        return "?"
    return str(int(arr.reshape(-1)[j]))
