"""`einops.rearrange` of a launch argument, where the pattern only merges neighbouring axes.

fla's launchers flatten trailing axes before a launch, `x = rearrange(x, 'b t ... -> b t (...)')`
under `if x.shape[-1] != weight.shape[0]:`. The evaluator did not know `rearrange`, so `x` was
unknown after the `if` and every size read from it a stand-in (an AR001 "the value of `T`
(subscript)"). A pattern whose right side keeps the left side's axes in their order and only
groups neighbours, `(...)`, `(h d)`, is a series of flattens (the shape torch documents for
`flatten`, host_tensor_ops.py). A pattern that reorders, splits (`(h d) -> h d`), adds or drops
an axis is not modelled: its value stays unknown.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z_0-9]*")


def flatten_ranges(pattern: str, rank: int) -> list[tuple[int, int]] | None:
    """The source axis ranges (first, last) the right side groups, for a tensor of `rank`
    axes; None when the pattern is more than merging neighbours in order."""
    if pattern.count("->") != 1:
        return None
    left, right = (_tokens(side) for side in pattern.split("->"))
    if left is None or right is None or any(isinstance(t, list) for t in left):
        return None
    names = [t for t in left if t != "..."]
    if left.count("...") > 1 or len(set(names)) != len(names) or len(names) > rank:
        return None
    spans: dict[str, tuple[int, int]] = {}
    axis = 0
    for t in left:
        width = rank - len(names) if t == "..." else 1
        spans[t] = (axis, axis + width - 1)
        axis += width
    if axis != rank:
        return None
    flat = [x for item in right for x in (item if isinstance(item, list) else [item])]
    if flat != left:
        return None  # reordered, split, added or dropped: not a flatten
    out: list[tuple[int, int]] = []
    for item in right:
        if isinstance(item, list) and item:
            first, last = spans[item[0]][0], spans[item[-1]][1]
            if last < first:
                return None  # `(...)` over no axes adds one of size 1: not modelled
            out.append((first, last))
    return out


def _tokens(side: str) -> list[str | list[str]] | None:
    """`b t (h d) ...` -> ['b', 't', ['h', 'd'], '...']; None for anything else (a literal
    `1`, nested groups, an unclosed group)."""
    out: list[str | list[str]] = []
    group: list[str] | None = None
    rest = _TOKEN.sub("", side).strip()
    if rest:
        return None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if group is not None:
                return None
            group = []
        elif tok == ")":
            if group is None:
                return None
            out.append(group)
            group = None
        elif group is not None:
            group.append(tok)
        else:
            out.append(tok)
    return None if group is not None else out
