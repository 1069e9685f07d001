"""Rewrite for the card autotune-served-shapes: search the tile sizes the launcher fixes.

Why: 32x32x32 tiles keep a tensor-core GEMM far below its roof (each loaded byte feeds 32 FMAs, and a
wave of tiny programs cannot hide memory latency); the best tile depends on the served shapes, so the
agent measures several on them, as `triton.autotune` would. The transformation changes the integer that
a tile constexpr (`BLOCK_*`/`TILE_*` parameter of the kernel) gets at the launch: a literal keyword, or
the constant the keyword's name is bound to in the launcher (an assignment or a parameter default) or at
module level. Because the grid reads the same name, grid and tile move together; a launcher that spells
the tile twice is caught by gate 1 (GR001/GR003), never by luck.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, launch_calls, replace, span

CARD = "autotune-served-shapes"
DESCRIPTION = "tile sizes searched on the served shapes"
GEMM_TILES = ((64, 64, 32), (128, 64, 32), (128, 128, 32), (64, 128, 64), (128, 128, 64), (128, 256, 64))
ATTN_TILES = ((64, 64), (128, 64), (64, 32), (128, 32))


def _role(name: str) -> str | None:
    up = name.upper()
    if not any(t in up for t in ("BLOCK", "TILE")):
        return None
    last = up.rstrip("_").rsplit("_", 1)[-1]
    return last if last in ("M", "N", "K") else None


def _constexprs(kernel: ast.FunctionDef) -> set[str]:
    return {a.arg for a in kernel.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}


def _const_sites(tree: ast.Module, launcher: ast.FunctionDef, name: str) -> list[ast.Constant]:
    """The integer constants that define `name` in the launcher (or its defaults), else at module level."""
    sites = []
    for scope in (launcher, tree):
        for node in ast.walk(scope) if scope is launcher else scope.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Constant):
                        sites.append(node.value)
                    elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        for t, v in zip(target.elts, node.value.elts, strict=False):
                            if isinstance(t, ast.Name) and t.id == name and isinstance(v, ast.Constant):
                                sites.append(v)
        if scope is launcher:
            args = launcher.args.args
            defaults = launcher.args.defaults
            for a, d in zip(args[len(args) - len(defaults):], defaults, strict=True):
                if a.arg == name and isinstance(d, ast.Constant):
                    sites.append(d)
        if sites:
            return sites
    return sites


def tile_sites(source: str, kernel: str, launcher_name: str) -> dict[str, list[ast.Constant]]:
    """Role (M, N, K) -> the constants that set that tile at the launch."""
    tree = ast.parse(source)
    kern, launcher = function(tree, kernel), function(tree, launcher_name)
    if kern is None or launcher is None:
        return {}
    tiles = {n for n in _constexprs(kern) if _role(n)}
    out: dict[str, list[ast.Constant]] = {}
    for call in launch_calls(launcher, kernel):
        for kw in call.keywords:
            if kw.arg not in tiles:
                continue
            role = _role(kw.arg)
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int):
                out.setdefault(role, []).append(kw.value)
            elif isinstance(kw.value, ast.Name):
                out.setdefault(role, []).extend(_const_sites(tree, launcher, kw.value.id))
    return {r: s for r, s in out.items() if s}


def applies(ctx) -> bool:
    tree = ast.parse(ctx.source)
    kern = function(tree, ctx.kernel)
    if kern is None or "autotune" in " ".join(ast.unparse(d) for d in kern.decorator_list):
        return False
    return bool(tile_sites(ctx.source, ctx.kernel, ctx.launcher))


def apply(source: str, kernel: str, launcher: str, sizes: dict[str, int]) -> str | None:
    sites = tile_sites(source, kernel, launcher)
    edits = {}
    for role, size in sizes.items():
        for node in sites.get(role, []):
            s, e = span(source, node)
            edits[(s, e)] = str(size)
    return replace(source, [(s, e, t) for (s, e), t in edits.items()]) if edits else None


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    roles = set(tile_sites(ctx.source, ctx.kernel, ctx.launcher))
    if {"M", "N", "K"} <= roles:
        table = [dict(zip("MNK", t, strict=True)) for t in GEMM_TILES]
    elif {"M", "N"} <= roles:
        table = [dict(zip("MN", t, strict=True)) for t in ATTN_TILES]
    else:
        table = [{r: s for r in roles} for s in (64, 128)]
    for sizes in table:
        label = "tiles " + " ".join(f"{r}={v}" for r, v in sorted(sizes.items()))
        yield label, apply(ctx.source, ctx.kernel, ctx.launcher, sizes), ()
