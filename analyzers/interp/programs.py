"""Which program ids of a launch grid the interpreter runs, without ever listing the grid.

A literal grid may hold 2**31 programs (legal Triton); the interpreter runs a few dozen of them,
so every choice here computes the chosen ids directly from the grid's extents and the number of
programs it returns is bounded whatever the grid.
"""

from __future__ import annotations

import math
from collections.abc import Collection

Pid = tuple[int, int, int]

MAX_PROGRAMS = 48
MAX_TILED = 1 << 12  # more tiles at one batch corner than this: sampled like any large grid


def nth_program(g: Pid, i: int) -> Pid:
    """The i-th program id in launch order (x fastest)."""
    return (i % g[0], i // g[0] % g[1], i // (g[0] * g[1]))


def spread_programs(g: Pid) -> tuple[list[Pid], bool]:
    """(every program when there are few, else an even spread with both ends; whether complete)."""
    total = math.prod(g)
    if total <= MAX_PROGRAMS:
        return [nth_program(g, i) for i in range(total)], True
    picks = {0, total - 1, total // 2, 1, total - 2}
    step = max(total // (MAX_PROGRAMS // 2), 1)
    picks |= set(range(0, total, step))
    return [nth_program(g, i) for i in sorted(picks) if 0 <= i < total][:MAX_PROGRAMS], False


def tiled_count(g: Pid, bare: Collection[int]) -> int:
    """How many programs `bare_axis_programs` runs at the last batch/head corner."""
    return math.prod(g[a] for a in range(3) if a not in bare)


def bare_axis_programs(g: Pid, bare_axes: Collection[int], data_dependent: bool) -> list[Pid]:
    """Batch/head axes: their first and last programs stand for the rest (coverage is then
    not judged; races and per-program facts still are). Every tile of the other axes runs at
    the last batch/head corner; the first tile also at each corner one axis away from it,
    back at 0 along that axis (a program sharing all but one axis with another: a store
    that ignores that axis races; and that axis's lowest addresses)."""
    bare = [a for a in range(3) if a in bare_axes]
    tiled = [range(g[a]) if a not in bare else [g[a] - 1] for a in range(3)]
    chosen = {(x, y, z) for z in tiled[2] for y in tiled[1] for x in tiled[0]}
    corner = [g[a] - 1 if a in bare else 0 for a in range(3)]
    for a in bare:
        flip = list(corner)
        flip[a] = 0
        chosen.add((flip[0], flip[1], flip[2]))
    if data_dependent:
        # work read from memory (page tables, lengths): the origin and a second index meet
        # contents the last corner does not
        second = [min(1, g[a] - 1) if a in bare else 0 for a in range(3)]
        chosen |= {(0, 0, 0), (second[0], second[1], second[2])}
    return sorted(chosen, key=lambda p: (p[2], p[1], p[0]))
