"""tree-sitter parsing of Python source, and the helpers every later stage uses on nodes.

One parser per thread (tree-sitter parsers are not thread-safe); trees can be re-parsed
incrementally by passing the old (edited) tree, which the language server does on each edit.
Only a tree without ERROR or MISSING nodes is re-used, and only for a result without them: through
error recovery tree-sitter (0.26) may re-use an old error subtree and recover differently from a
fresh parse of the same text (issue 13: an ERROR node of 14 bytes instead of 43), so the tree
would no longer be the tree of its text. Such a parse starts from scratch.
"""

from __future__ import annotations

import threading

import tree_sitter_python
from argus.analyzers.findings import Span
from tree_sitter import Language, Node, Parser, Tree

PY_LANGUAGE = Language(tree_sitter_python.language())
_local = threading.local()


def parser() -> Parser:
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(PY_LANGUAGE)
    return p


def parse(source: bytes, old_tree: Tree | None = None) -> Tree:
    """The tree of `source`, re-using `old_tree` (already `Tree.edit`ed to `source`) where safe."""
    if old_tree is None or old_tree.root_node.has_error:
        return parser().parse(source)
    tree = parser().parse(source, old_tree)
    return parser().parse(source) if tree.root_node.has_error else tree


def span_of(node: Node) -> Span:
    return Span(node.start_byte, node.end_byte, tuple(node.start_point), tuple(node.end_point))


def text_of(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def first_error(node: Node) -> Node | None:
    """The first ERROR or MISSING node under `node`, in source order (None when it parses)."""
    if not node.has_error:
        return None
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        stack.extend(reversed([c for c in n.children if c.has_error or c.is_missing or c.is_error]))
    return node
