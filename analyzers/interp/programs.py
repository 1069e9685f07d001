"""Which program ids of a launch grid the interpreter runs, without ever listing the grid.

A literal grid may hold 2**31 programs (legal Triton); the interpreter runs a few dozen of them,
so every choice here computes the chosen ids directly from the grid's extents and the number of
programs it returns is bounded whatever the grid. `choose_programs` decides for one probe which
ids run, which of them run for their addresses only, and whether they are the whole grid.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from argus.analyzers.model.nodes import subtree

if TYPE_CHECKING:
    from argus.analyzers.model.kernel import KernelModel
    from argus.analyzers.model.launch import ProbeLaunch
    from argus.analyzers.model.scan import KernelScan

Pid = tuple[int, int, int]

MAX_PROGRAMS = 24
MAX_TILED = 24  # more tiles at one batch corner than this: sampled like any large grid


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


@dataclass
class ProgramChoice:
    """The programs one probe runs, in order."""

    programs: list[Pid]
    light: set[Pid]  # of them, the ones run for their addresses only (floats are stand-ins)
    complete: bool  # they are the whole grid: output coverage and races can be judged


def choose_programs(kernel: KernelModel, scan: KernelScan, launch: ProbeLaunch) -> ProgramChoice:
    if launch.assumed and not _persistent(kernel):
        return ProgramChoice(_assumed_grid_programs(launch.grid, _data_dependent(scan)), set(), False)
    progs, complete = _sample(kernel, scan, launch)
    light = _light_programs(kernel, scan, launch, progs)
    if light and (launch.kind != "ragged" or launch.sampled):
        # edge probes (size 1, exact and half tiles, further configs) look at tails: the
        # ragged probe's address-only programs already covered races and low addresses
        progs = [p for p in progs if p not in light]
        light = set()
        complete = False  # (coverage is the ragged probe's to judge)
    return ProgramChoice(progs, light, complete)


def _assumed_grid_programs(g: Pid, data_dependent: bool) -> list[Pid]:
    """A launch the checker could not bind runs on a grid it assumed, so what programs cover
    and whether two of them race is not judged (interpreter.finish, access_checks): only what
    each program does alone is. The origin (lowest addresses, no tail) and the last corner
    (every axis at its tail) stand for the rest; where the work is read from memory, a second
    program along each axis meets other contents as well (as in `bare_axis_programs`)."""
    chosen = {(0, 0, 0), (g[0] - 1, g[1] - 1, g[2] - 1)}
    if data_dependent:
        chosen.add((min(1, g[0] - 1), min(1, g[1] - 1), min(1, g[2] - 1)))
    return sorted(chosen, key=lambda p: (p[2], p[1], p[0]))


def _persistent(kernel: KernelModel) -> bool:
    """A persistent kernel (it loops over `tl.num_programs`): every program may do any tile."""
    return kernel.cached(
        "persistent",
        lambda: any(isinstance(n, ast.Call) and _names_num_programs(n.func) for n in subtree(kernel.func)),
    )


def _names_num_programs(func: ast.expr) -> bool:
    """`ast.unparse(func).endswith("num_programs")` without the unparse for the two callee forms
    nearly every call has: a `Name` unparses to its id; an `Attribute` to its value's text, a
    dot and its attr, and a suffix without a dot lies within the attr."""
    if isinstance(func, ast.Name):
        return func.id.endswith("num_programs")
    if isinstance(func, ast.Attribute):
        return func.attr.endswith("num_programs")
    return ast.unparse(func).endswith("num_programs")


def _light_programs(kernel: KernelModel, scan: KernelScan, launch: ProbeLaunch, progs: list[Pid]) -> set[Pid]:
    """Which programs run for their addresses only. Along batch/head (bare) axes programs
    differ only in where they read and write: the ones at the last corner of those axes run
    in full (each coordinate there differs from the others, so tag mix-ups show), every tile
    of the other axes among them; the rest check bounds, races and coverage. Where the work
    is read from memory (page tables, lengths, ignored rows) programs differ in more than
    addresses: the first and second index along those axes run in full too, so that three
    programs meet different contents."""
    bare = [a for a in range(3) if a in launch.bare_axes]
    if not bare or _persistent(kernel):
        return set()
    g = launch.grid
    full = {p for p in progs if all(p[a] == g[a] - 1 for a in bare)}
    if _data_dependent(scan):
        full |= {p for p in progs if all(p[a] == 0 for a in bare)}
        full |= {p for p in progs if all(p[a] == min(1, g[a] - 1) for a in bare)}
    return set(progs) - full


def _sample(kernel: KernelModel, scan: KernelScan, launch: ProbeLaunch) -> tuple[list[Pid], bool]:
    """(the program ids to run, whether they are every program of the grid)."""
    g = launch.grid
    if (launch.kind != "ragged" or launch.sampled) and math.prod(g) > 2:
        # edge probes look for tails and edges: the first and last program of each axis
        corners = {(x, y, z) for x in {0, g[0] - 1} for y in {0, g[1] - 1} for z in {0, g[2] - 1}}
        return sorted(corners, key=lambda p: (p[2], p[1], p[0])), False
    bare = launch.bare_axes
    if math.prod(g) > 8 and bare and not _persistent(kernel) and tiled_count(g, bare) <= MAX_TILED:
        return bare_axis_programs(g, bare, _data_dependent(scan)), False
    return spread_programs(g)


def _data_dependent(scan: KernelScan) -> bool:
    """Programs whose work depends on loaded indices or lengths (a page table, sequence
    lengths with sentinels): the first and last program alone may both miss the sentinel
    that the second meets."""
    return any(p.sentinels or p.sentinel_params or p.length for p in scan.policies.values())
