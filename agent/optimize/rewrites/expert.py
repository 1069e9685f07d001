"""Rewrite for the cards the library's expert kernels implement: the expert kernel, copied into the user's file.

Why: where the user's kernel is one of the patterns the library has a tuned kernel for (a GEMM, an
attention forward, a fused MoE layer), the fastest correct candidate is usually that kernel: persistent
grid, pid swizzle, tensor descriptors, pipelining, exp2, causal block skipping, token alignment (see
knowledge/kernels/*.py and their cards). The candidate is self-contained: the library's launcher and
everything it reaches are inlined under `_argus_` names (rewrites/_inline.py), so the patched file
imports nothing of Argus and gate 1 checks exactly the code the user gets. The launcher keeps its name
and signature; its body becomes a call to the copied launcher with the user's arguments by name.
The user's own kernel stays in the file, unused: the diff is then one added block and one changed
launcher body, the user's code reads as before, and reverting is deleting the block. Whether the
layouts agree is not assumed: gate 2 compares the result with the user's reference.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, replace, span
from argus.agent.optimize.rewrites._inline import PREFIX, inline

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
    """The user's file with the library launcher inlined and the user's launcher calling it."""
    module, func, n_pos, optional, _ = EXPERTS[pattern]
    tree = ast.parse(source)
    launcher = function(tree, launcher_name)
    if launcher is None:
        return None
    copied = inline(module, func, source)
    params = [a.arg for a in launcher.args.args]
    args = params[:n_pos] + [f"{p}={p}" for p in params[n_pos:] if p in optional]
    body = launcher.body
    doc = body[0] if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) else None
    first = body[1] if doc is not None and len(body) > 1 else body[0]
    start, _ = span(source, first)
    _, end = span(source, body[-1])
    new_body = f"return {copied.entry}({', '.join(args)})  # {module}.{func}, copied above"
    block = (f"# --- Argus: {module}.{func} and what it uses, copied from the Argus library "
             f"(names prefixed {PREFIX}) ---\n\n\n"
             f"{copied.code}\n# --- end of the copied library code ---\n")
    have = {ast.get_source_segment(source, n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    missing = [line for line in copied.imports if line not in have]
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    at = span(source, imports[-1])[1] if imports else _after_docstring(source, tree)
    head = "".join(f"\n{line}" for line in missing) + "\n\n\n" + block
    out = replace(source, [(at, at, head), (start, end, new_body)])
    return out, module


def _after_docstring(source: str, tree: ast.Module) -> int:
    """Where the copy goes in a file without imports: after the module docstring, or at the top."""
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return span(source, first)[1]
    return 0


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    made = apply(ctx.source, ctx.launcher, ctx.pattern)
    if made is None:
        return
    source, module = made
    yield f"{module}.{EXPERTS[ctx.pattern][1]}", source, ()
