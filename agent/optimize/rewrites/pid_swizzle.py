"""Rewrite for the card pid-swizzle-l2: a 2-D (pid_m, pid_n) grid becomes a 1-D grid in GROUP_M bands.

Why: a row-major 2-D grid runs, at any moment, programs that share one A row band but each need a
different B column band, so B streams from HBM once per row band. Numbering tiles in bands of GROUP_M
row blocks makes the programs in flight share a few bands of both operands in L2 (the card's mechanism).
The transformation: in the kernel, `pid_m = tl.program_id(0)` and `pid_n = tl.program_id(1)` become the
grouped decomposition of one program id over cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N) tiles (the last band
may be shorter, so every tile is still covered once: GR001); in the launcher the grid tuple
`(a, b)` becomes `(a * b,)`. It applies only when the kernel has size parameters M and N and tile
constexprs for both, and the grid is a 2-tuple the launcher spells out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, launch_calls, replace, span
from argus.agent.optimize.rewrites.retile import _constexprs, _role

CARD = "pid-swizzle-l2"
DESCRIPTION = "GROUP_M program-id swizzle on a 1-D grid"
GROUPS = (8, 4)
_NEW_NAMES = ("pid", "tiles_m", "tiles_n", "per_group", "first_m", "group_rows")


def _pid_assigns(kernel: ast.FunctionDef) -> dict[int, ast.Assign]:
    out = {}
    for node in kernel.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "tl.program_id"
                and len(node.value.args) == 1 and isinstance(node.value.args[0], ast.Constant)):
            out[node.value.args[0].value] = node
    return out


def _grid_tuple(launcher: ast.FunctionDef, kernel: str) -> ast.Tuple | None:
    calls = launch_calls(launcher, kernel)
    if len(calls) != 1:
        return None
    grid = calls[0].func.slice
    if isinstance(grid, ast.Tuple):
        return grid if len(grid.elts) == 2 else None
    if isinstance(grid, ast.Name):
        for node in ast.walk(launcher):
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == grid.id for t in node.targets)
                    and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2):
                return node.value
    return None


def _plan(source: str, kernel_name: str, launcher_name: str):
    tree = ast.parse(source)
    kernel, launcher = function(tree, kernel_name), function(tree, launcher_name)
    if kernel is None or launcher is None:
        return None
    params = {a.arg for a in kernel.args.args}
    tiles = {_role(n): n for n in _constexprs(kernel) if _role(n) in ("M", "N")}
    pids = _pid_assigns(kernel)
    used = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)}
    grid = _grid_tuple(launcher, kernel_name)
    if not ({"M", "N"} <= params and set(tiles) == {"M", "N"} and {0, 1} <= set(pids) and grid is not None):
        return None
    if used & set(_NEW_NAMES):
        return None
    body = kernel.body
    if body.index(pids[1]) != body.index(pids[0]) + 1:  # the two reads must be adjacent statements
        return None
    return kernel, tiles, pids, grid


def applies(ctx) -> bool:
    return _plan(ctx.source, ctx.kernel, ctx.launcher) is not None


def apply(source: str, kernel_name: str, launcher_name: str, group_m: int) -> str | None:
    plan = _plan(source, kernel_name, launcher_name)
    if plan is None:
        return None
    _, tiles, pids, grid = plan
    m_name, n_name = pids[0].targets[0].id, pids[1].targets[0].id
    indent = " " * pids[0].col_offset
    lines = [
        "pid = tl.program_id(0)",
        f"tiles_m = tl.cdiv(M, {tiles['M']})",
        f"tiles_n = tl.cdiv(N, {tiles['N']})",
        f"per_group = {group_m} * tiles_n",
        f"first_m = (pid // per_group) * {group_m}",
        f"group_rows = min(tiles_m - first_m, {group_m})",
        f"{m_name} = first_m + (pid % per_group) % group_rows",
        f"{n_name} = (pid % per_group) // group_rows",
    ]
    s0, _ = span(source, pids[0])
    _, e1 = span(source, pids[1])
    g0, g1 = span(source, grid)
    a, b = (source[slice(*span(source, e))] for e in grid.elts)
    edits = [(s0, e1, ("\n" + indent).join(lines)), (g0, g1, f"({a} * {b},)")]
    return replace(source, edits)


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    for g in GROUPS:
        yield f"GROUP_M={g}", apply(ctx.source, ctx.kernel, ctx.launcher, g), ()
