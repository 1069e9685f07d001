"""Answers about a syntax tree kept on the tree's own node, shared by every kernel it serves.

A launcher that launches several kernels (an autograd `forward` and `backward`, a host
function that launches three) is bound once per kernel: each kernel's binder walked the same
launcher for its tensors' ranks, its local values, its keyed tables, and copied the same
autograd `forward`. After an edit in launcher code every kernel of the launcher is bound again
(the language server's slow edits: four to seven kernels, 20-60 ms each), so those questions,
which read the launcher's tree alone, are answered once per tree here.

Trees are not edited after parsing (model/nodes.py); the copies that are rewritten
(kernel_aliases.py, binder_ctx.py) are made with `copy.deepcopy`, which gives a copy an empty
memo, so a rewritten copy never answers with the original's answers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class _Memo(dict):  # type: ignore[type-arg]
    """The answers kept on one node; a deep copy of the node starts without them."""

    def __deepcopy__(self, _memo: dict[int, Any]) -> _Memo:
        return _Memo()


def on_node(node: ast.AST, key: Hashable, compute: Callable[[], T], *deps: object) -> T:
    """`compute()` once per `node` and `key`. `deps` are the other objects the answer reads
    (a launcher's function table): it is reused only while they are the same objects."""
    memo = node.__dict__.get("_argus_memo")
    if memo is None:
        memo = node._argus_memo = _Memo()  # type: ignore[attr-defined]
    held = memo.get(key)
    if held is not None and len(held[0]) == len(deps) and all(a is b for a, b in zip(held[0], deps, strict=True)):
        return held[1]  # type: ignore[no-any-return]
    value = compute()
    memo[key] = (deps, value)  # (the deps are held, so no other object takes their ids)
    return value


def fresh_copy(tree: T) -> T:
    """A copy of `tree` for rewriting, without any answer kept on its nodes (the node lists of
    model/nodes.py and the memos of launch_shared.py and binder_inputs.py would be copied along
    by `copy.deepcopy` and go stale once the copy is rewritten). Fields and positions only, which
    is also several times faster than `deepcopy` on a large `forward`."""
    return _copied(tree)  # type: ignore[no-any-return]


def _copied(value: Any) -> Any:
    if isinstance(value, ast.AST):
        cls = value.__class__
        out = cls.__new__(cls)
        for name in value._fields:
            if hasattr(value, name):
                setattr(out, name, _copied(getattr(value, name)))
        for name in value._attributes:
            if hasattr(value, name):
                setattr(out, name, getattr(value, name))
        return out
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value  # (str, bytes, int, float, complex, None, Ellipsis: immutable)
