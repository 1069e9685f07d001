"""A module's own bindings (module_bindings.py) gathered one top-level statement at a
time, each statement's answer remembered by its text.

The answer for a whole module needs a parse of the whole module (8-13 ms on a 1,000-1,400-line
file) after every edit, although an edit changes one statement. A statement's contribution (the
names it binds at module level, the `global` names it declares, whether it star-imports) depends
only on its own text, so each is parsed alone and kept; an edit parses the statement it changed.
Used only where the split is the parser's own (a tree-sitter tree without errors, UTF-8 text
without a coding cookie); anywhere else the whole module is parsed as before.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator

from tree_sitter import Tree

#: a statement's contribution: (names, star import); None: the statement does not parse alone
Contribution = tuple[frozenset[str], bool] | None

MEMO_STATEMENTS = 4096
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


class StatementMemo:
    """Each top-level statement's contribution, by a digest of its text (a small thread-safe
    LRU shared by every document: the same statement text always contributes the same)."""

    def __init__(self, capacity: int = MEMO_STATEMENTS) -> None:
        self._data: OrderedDict[bytes, Contribution] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def get(self, text: bytes, compute: Callable[[bytes], Contribution]) -> Contribution:
        key = hashlib.blake2b(text, digest_size=16).digest()  # (a digest: the texts are not kept)
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        found = compute(text)
        with self._lock:
            self._data[key] = found
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
        return found


_MEMO = StatementMemo()


def splittable(source: bytes) -> bool:
    """Whether statements parsed alone read as they do in the module: UTF-8 text without a
    coding cookie in its first two lines (which would change how the bytes decode)."""
    head = b"\n".join(source.split(b"\n", 2)[:2])
    if _COOKIE.search(head) is not None:
        return False
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def bindings_by_statement(
    statements: Iterable[bytes], contribution: Callable[[bytes], Contribution]
) -> frozenset[str] | None:
    """The union of the statements' contributions; None where one star-imports or does not
    parse (as the whole module's parse would then fail, or its answer be unknowable)."""
    out: set[str] = set()
    for text in statements:
        found = _MEMO.get(text, contribution)
        if found is None or found[1]:
            return None
        out.update(found[0])
    return frozenset(out)


def top_level_spans(tree: Tree) -> list[tuple[int, int]] | None:
    """The byte spans of a tree-sitter module's top-level statements (comments and the `;`
    between statements of one line left out); None where the tree has an error or a top-level
    piece that is neither (the whole module is parsed then)."""
    root = tree.root_node
    if root.has_error:
        return None
    spans = []
    for child in root.children:
        if child.type in ("comment", ";"):
            continue
        if not child.is_named:
            return None
        spans.append((child.start_byte, child.end_byte))
    return spans


def statement_texts(source: bytes, spans: Iterable[tuple[int, int]]) -> Iterator[bytes]:
    for start, end in spans:
        yield source[start:end]


def parse_alone(text: bytes) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
