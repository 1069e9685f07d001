"""Rewrite for the cards the library's expert kernels implement: the expert kernel adapted to the launcher.

Why: where the user's kernel is one of the patterns the library has a tuned kernel for (a GEMM, an
attention forward, a fused MoE layer), the fastest correct candidate is usually that kernel: persistent
grid, pid swizzle, tensor descriptors, pipelining, exp2, causal block skipping, token alignment (see
knowledge/kernels/*.py and their cards). The transformation keeps the launcher's name and signature and
replaces its body by a call to the library's launcher, passing the user's arguments by name; it adds one
`from knowledge.kernels.X import Y as _argus_Y` import. The user's kernel stays in the file, unused.
Whether the layouts agree is not assumed: gate 2 compares the result with the user's reference, and
gate 1 checks the library module as well as the file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, replace, span

CARD = "persistent-kernels"
DESCRIPTION = "the library's expert kernel behind the user's launcher"

#: pattern -> (module, function, positional parameter count, optional keyword parameters), cards
EXPERTS = {
    "gemm": ("argus.knowledge.kernels.gemm", "matmul", 2, (), ("persistent-kernels", "pid-swizzle-l2", "tma-descriptors")),
    "attention": ("argus.knowledge.kernels.attention", "attention", 3, ("causal", "sm_scale"),
                  ("online-softmax-exp2", "causal-block-skipping", "tma-descriptors")),
    "moe": ("argus.knowledge.kernels.moe", "fused_moe", 5, ("renormalize",),
            ("moe-token-alignment", "epilogue-fusion", "fused-topk-weighting")),
}


def cards_for(pattern: str) -> tuple[str, ...]:
    return EXPERTS[pattern][4] if pattern in EXPERTS else ()


def applies(ctx) -> bool:
    if ctx.pattern not in EXPERTS:
        return False
    launcher = function(ast.parse(ctx.source), ctx.launcher)
    return launcher is not None and len(launcher.args.args) >= EXPERTS[ctx.pattern][2]


def apply(source: str, launcher_name: str, pattern: str) -> tuple[str, str] | None:
    module, func, n_pos, optional, _ = EXPERTS[pattern]
    tree = ast.parse(source)
    launcher = function(tree, launcher_name)
    if launcher is None:
        return None
    params = [a.arg for a in launcher.args.args]
    alias = f"_argus_{func}"
    args = params[:n_pos] + [f"{p}={p}" for p in params[n_pos:] if p in optional]
    body = launcher.body
    doc = body[0] if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) else None
    first = body[1] if doc is not None and len(body) > 1 else body[0]
    start, _ = span(source, first)
    _, end = span(source, body[-1])
    new_body = f"return {alias}({', '.join(args)})  # {module}.{func}: the library's expert kernel"
    out = replace(source, [(start, end, new_body)])
    import_line = f"from {module} import {func} as {alias}\n"
    imports = [n for n in ast.parse(out).body if isinstance(n, ast.Import | ast.ImportFrom)]
    if imports:
        _, at = span(out, imports[-1])
        out = out[:at] + "\n" + import_line.rstrip("\n") + out[at:]
    else:
        out = import_line + out
    return out, module


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    made = apply(ctx.source, ctx.launcher, ctx.pattern)
    if made is None:
        return
    source, module = made
    yield f"{module}.{EXPERTS[ctx.pattern][1]}", source, (module,)
