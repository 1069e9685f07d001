"""Every node under a syntax tree, listed once per tree.

The scan, the launch binder, the interpreter and the probe planner each walk the same kernel
and launcher trees; `ast.walk` re-derives the children of every node each time, which was a
measurable part of checking one kernel. The list is kept on the root node itself, so it lives
exactly as long as the tree it describes.
"""

from __future__ import annotations

import ast


def subtree(root: ast.AST) -> list[ast.AST]:
    """The nodes of `root` in `ast.walk` order (root first). Trees are not edited after parsing."""
    cached = root.__dict__.get("_argus_subtree")
    if cached is None:
        # breadth-first like ast.walk, without its per-node generators
        cached = [root]
        i = 0
        while i < len(cached):
            node = cached[i]
            i += 1
            for name in node._fields:
                v = getattr(node, name, None)
                if isinstance(v, list):
                    cached.extend(c for c in v if isinstance(c, ast.AST))
                elif isinstance(v, ast.AST):
                    cached.append(v)
        root._argus_subtree = cached  # type: ignore[attr-defined]
    return cached


def stored_names(roots: list[ast.AST]) -> set[str]:
    """The plain names assigned anywhere under `roots` (targets, loop variables, `with ... as`)."""
    return {n.id for root in roots for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def assignment_parts(node: ast.AST) -> tuple[list[ast.expr], ast.expr] | None:
    """(targets, value) of a statement that binds names from a value: `a = b`, `a += b`,
    `a: T = b`, and a `for a in b` loop; None for any other node (and a bare annotation)."""
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
        return [node.target], node.value
    if isinstance(node, ast.For):
        return [node.target], node.iter
    return None


def range_operands(call: ast.Call) -> list[ast.expr]:
    """The (start, stop, step) operands of a `range`/`tl.range`/`tl.static_range` call as
    positional expressions. Triton's ranges take `arg2` and `step` by keyword too
    (`tl.range(0, n, step=BLOCK_N)`); a step given so with one positional bound counts from 0,
    as Triton's own `range(arg1, arg2=None, step=None, ...)` does. The other keywords
    (`num_stages`, `loop_unroll_factor`, ...) change how a loop is compiled, not its iterations.
    Kept on the call: a loop header is read at every execution of the loop."""
    cached = call.__dict__.get("_argus_range_operands")
    if cached is not None:
        return cached
    ops = list(call.args)
    by_name = {k.arg: k.value for k in call.keywords if k.arg}
    if "arg1" in by_name and not ops:
        ops.append(by_name["arg1"])
    if "arg2" in by_name and len(ops) == 1:
        ops.append(by_name["arg2"])
    if "step" in by_name and len(ops) <= 2:
        if len(ops) == 1:
            ops.insert(0, ast.copy_location(ast.Constant(0), call))
        ops.append(by_name["step"])
    call._argus_range_operands = ops  # type: ignore[attr-defined]
    return ops
