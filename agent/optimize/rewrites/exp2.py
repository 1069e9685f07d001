"""Rewrite for the card online-softmax-exp2: `tl.exp(x)` becomes `tl.exp2(x * LOG2E)` in the kernel.

Why: the GPU's special-function unit computes 2^x (MUFU.EX2); `exp(x)` compiles to a multiply by
log2(e) and an ex2 anyway, so folding the constant next to the subtraction of the running max lets the
compiler fuse it into the score scaling (one FMA) instead of a separate multiply per probability.
exp(x) = 2^(x * log2 e) exactly in real arithmetic, so the online-softmax rescales stay consistent
(NU002 still holds: both the probabilities and the correction factor go through the same rewrite).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, replace, span

CARD = "online-softmax-exp2"
DESCRIPTION = "exp -> exp2 with log2(e) folded in"
LOG2E = "1.4426950408889634"


def _exp_calls(fn: ast.FunctionDef) -> list[ast.Call]:
    out = []
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "exp"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "tl" and len(node.args) == 1):
            out.append(node)
    return out


def applies(ctx) -> bool:
    fn = function(ast.parse(ctx.source), ctx.kernel)
    return fn is not None and bool(_exp_calls(fn))


def apply(source: str, kernel: str) -> str | None:
    fn = function(ast.parse(source), kernel)
    if fn is None:
        return None
    edits = []
    for call in _exp_calls(fn):
        s, e = span(source, call)
        a_s, a_e = span(source, call.args[0])
        edits.append((s, e, f"tl.exp2(({source[a_s:a_e]}) * {LOG2E})"))
    # nested exp calls would overlap: rewrite the outermost only
    edits.sort()
    kept, last_end = [], -1
    for edit in edits:
        if edit[0] >= last_end:
            kept.append(edit)
            last_end = edit[1]
    return replace(source, kept) if kept else None


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    yield "tl.exp(x) -> tl.exp2(x * log2(e))", apply(ctx.source, ctx.kernel), ()
