"""Rewrite for the card software-pipelining: set `num_warps` and `num_stages` at the kernel's launch.

Why: a launch without them runs 4 warps and Triton's default stages; a K loop that streams tiles wants
more stages (loads of tile k+1..k+S-1 in flight while tile k is multiplied) and a large tile more warps.
The transformation adds (or replaces) the two keyword arguments of every `kernel[grid](...)` call in the
launcher. It changes no index math, so gate 1 sees the same kernel. Skipped for autotuned kernels, whose
configs own these values.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, launch_calls, replace, span

CARD = "software-pipelining"
DESCRIPTION = "num_warps / num_stages at the launch (software pipelining of the K loop)"
SETTINGS = ((4, 3), (8, 3), (4, 4), (8, 4), (4, 2))


def applies(ctx) -> bool:
    tree = ast.parse(ctx.source)
    kern, launcher = function(tree, ctx.kernel), function(tree, ctx.launcher)
    if kern is None or launcher is None or "autotune" in " ".join(ast.unparse(d) for d in kern.decorator_list):
        return False
    return bool(launch_calls(launcher, ctx.kernel))


def apply(source: str, kernel: str, launcher_name: str, warps: int, stages: int) -> str | None:
    tree = ast.parse(source)
    launcher = function(tree, launcher_name)
    if launcher is None:
        return None
    edits = []
    for call in launch_calls(launcher, kernel):
        for kw in call.keywords:
            if kw.arg in ("num_warps", "num_stages"):
                s, e = span(source, kw.value)
                edits.append((s, e, str(warps if kw.arg == "num_warps" else stages)))
        have = {kw.arg for kw in call.keywords}
        extra = [f"{k}={v}" for k, v in (("num_warps", warps), ("num_stages", stages)) if k not in have]
        if extra:
            _, end = span(source, call)
            inner = source[:end - 1].rstrip()
            sep = "" if inner.endswith(",") else ","
            insert_at = len(inner)
            edits.append((insert_at, insert_at, f"{sep} {', '.join(extra)}"))
    return replace(source, edits) if edits else None


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    for warps, stages in SETTINGS:
        yield f"num_warps={warps}, num_stages={stages}", apply(ctx.source, ctx.kernel, ctx.launcher, warps, stages), ()
