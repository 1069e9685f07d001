"""Answers about a tree-sitter node that depend on its text alone, kept by that text.

Every check of a document parses a new tree, so answers kept on nodes die with the check; yet
before it can reuse a single cached kernel, a check asked the same questions of every launcher and
kernel again (which names a launcher subscripts, which names a kernel calls, each cache-key
piece's normalized text): a walk of every launcher's nodes in Python and a query per kernel,
some 8 ms of every keystroke on the language server's real files, the edits that re-analyze
nothing included. An edit changes one definition's text, so the others' answers are looked up
here by their bytes. Only answers that are functions of the node's text may be kept (relative
offsets, names; never nodes or absolute positions), and they are shared, so they must not be
mutated (frozensets and tuples).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from tree_sitter import Node

T = TypeVar("T")

#: answers kept, across documents (a few per definition; each at most a few hundred bytes)
MEMO_TEXTS = 8192

_DATA: OrderedDict[tuple[str, bytes], Any] = OrderedDict()
_LOCK = threading.Lock()


def by_text(kind: str, node: Node, compute: Callable[[], T]) -> T:
    """`compute()` (an answer about `node` of kind `kind`), or the answer kept for a node of
    the same text."""
    key = (kind, node.text or b"")
    with _LOCK:
        if key in _DATA:
            _DATA.move_to_end(key)
            return _DATA[key]  # type: ignore[no-any-return]
    found = compute()
    with _LOCK:
        _DATA[key] = found
        while len(_DATA) > MEMO_TEXTS:
            _DATA.popitem(last=False)
    return found


def forget() -> None:
    """Drop every kept answer (the check worker, once its last document is closed)."""
    with _LOCK:
        _DATA.clear()
