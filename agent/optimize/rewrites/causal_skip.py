"""Rewrite for the card causal-block-skipping: a causal attention loop stops at the diagonal block.

Why: with a causal mask, key blocks wholly above the diagonal contribute exp(-inf) = 0 to every row of
the query block, yet a loop over all of S still loads them and runs two dots on them: about half the
work of a causal forward. The transformation computes, before the key loop, `hi = min(start + BLOCK_M, S)`
when the CAUSAL constexpr is set (else `hi = S`), where `start + tl.arange(0, BLOCK_M)` is the query rows'
own definition, and makes the loop `range(lo, hi, BLOCK_N)`. The mask inside the loop stays, so the
diagonal block is still masked element by element; every key a row may see is still visited once (DF003).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, replace, span

CARD = "causal-block-skipping"
DESCRIPTION = "causal key loop stops at the diagonal block"


def _plan(source: str, kernel_name: str):
    kernel = function(ast.parse(source), kernel_name)
    if kernel is None:
        return None
    flags = [a.arg for a in kernel.args.args if a.arg in ("CAUSAL", "IS_CAUSAL")]
    rows = None
    for node in kernel.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)
                and ast.unparse(node.value.right).startswith("tl.arange(0, ")):
            block = ast.unparse(node.value.right)[len("tl.arange(0, "):-1]
            if block.endswith("_M"):
                rows = (node, node.value.left, block)
    loop = next((n for n in kernel.body if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
                 and ast.unparse(n.iter.func) == "range" and len(n.iter.args) == 3), None)
    if not flags or rows is None or loop is None or "hi" in {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)}:
        return None
    return flags[0], rows, loop


def applies(ctx) -> bool:
    return _plan(ctx.source, ctx.kernel) is not None


def apply(source: str, kernel_name: str) -> str | None:
    plan = _plan(source, kernel_name)
    if plan is None:
        return None
    flag, (_, start, block), loop = plan
    stop = loop.iter.args[1]
    indent = " " * loop.col_offset
    seq = source[slice(*span(source, stop))]
    first = source[slice(*span(source, start))]
    head = (f"if {flag}:\n{indent}    hi = tl.minimum({first} + {block}, {seq})\n{indent}else:\n"
            f"{indent}    hi = {seq}\n{indent}")
    loop_start, _ = span(source, loop)
    s, e = span(source, stop)
    return replace(source, [(loop_start, loop_start, head), (s, e, "hi")])


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    yield "stop the key loop at the diagonal block", apply(ctx.source, ctx.kernel), ()
