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
