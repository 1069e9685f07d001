"""One Python syntax tree per module text, shared by every stage that reads the whole module.

The unbound-name rule, the binder's caller guards and three rules each parsed the launcher
module on their own, each with its own memo: after an edit (a new text) a check that analyzes
one kernel again parsed the file four to five times, 8-13 ms each on a 1,000-1,400-line file.
Every such reader now shares `module_tree`'s tree; the tree is read-only for all of them.

An edit changes one top-level statement, yet a new text was parsed whole (8-24 ms on the
language server's real files) and every whole-module reader walked all of it again (the
callers index alone, 20-30 ms): a token typed in a kernel paid some 50 ms before any of its own
work. Where the module view has told how its parser split the text (`remember_split`: a
tree-sitter tree without errors, UTF-8 without a coding cookie, every statement starting a
line), the tree is assembled from the statements parsed one by one, each at its own row (so
every position reads as in a parse of the whole text) and kept by its row and text
(`_PartMemo`): an edit parses the statements it changed. Readers that walk the whole module
keep their answer per part on the part itself (`part_answers`: each statement parsed once
more, at row 0, for answers that read no position, so a line opened above a statement keeps
them), so they re-walk only the changed statements too; `bfs_merged` puts per-part answers back in the order one `ast.walk` of
the whole module visits them. Without a split the whole text is parsed, as before, as one part.
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import TypeVar

from argus.analyzers.model.node_memo import on_node
from argus.analyzers.statement_bindings import splittable

T = TypeVar("T")

#: parsed statements kept (by row and text), across documents; about 2-4 per 100 lines of code
MEMO_PARTS = 2048
#: module texts whose split is remembered (the views being checked, and a few before them)
MEMO_SPLITS = 8

_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


class _PartMemo:
    """Parsed top-level statements by (row, text), a small thread-safe LRU; None: no parse.
    Row 0 stands for "anywhere": the answers of `part_answers` read no position."""

    def __init__(self, capacity: int) -> None:
        self._data: OrderedDict[tuple[int, bytes], ast.Module | None] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def get(self, row: int, text: bytes) -> ast.Module | None:
        key = (row, text)
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        try:  # (the rows above it as blank lines: every position is the one in the whole text)
            found: ast.Module | None = ast.parse(b"\n" * row + text)
        except _UNPARSABLE:
            found = None
        with self._lock:
            self._data[key] = found
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_PARTS = _PartMemo(MEMO_PARTS)
_UNPLACED = _PartMemo(MEMO_PARTS)  # (row 0: for answers that read no position)
_SPLITS: OrderedDict[bytes, tuple[tuple[int, bytes], ...]] = OrderedDict()
_SPLITS_LOCK = threading.Lock()


def forget() -> None:
    """Drop every kept statement, split and tree (the language server's check worker, once its
    last document is closed: nothing it keeps is needed again, and the memory goes back)."""
    _PARTS.clear()
    _UNPLACED.clear()
    with _SPLITS_LOCK:
        _SPLITS.clear()
    module_tree.cache_clear()
    _whole_tree.cache_clear()


def remember_split(source: bytes, spans: Sequence[tuple[int, int]] | None) -> None:
    """Tell the readers of `source` how a parser without errors split it into top-level
    statements (byte spans, in order: statement_bindings.top_level_spans). Ignored where a statement
    parsed alone could read otherwise: a coding cookie or non-UTF-8 text, or a statement that
    does not start its line (`a = 1; b = 2`: the second's columns would be off)."""
    if spans is None or not splittable(source):
        return
    parts: list[tuple[int, bytes]] = []
    row, last = 0, 0
    for start, end in spans:
        if start > 0 and source[start - 1] != 0x0A:
            return
        row += source.count(b"\n", last, start)
        last = start
        parts.append((row, source[start:end]))
    with _SPLITS_LOCK:
        _SPLITS[source] = tuple(parts)
        _SPLITS.move_to_end(source)
        while len(_SPLITS) > MEMO_SPLITS:
            _SPLITS.popitem(last=False)


def split_known(source: bytes) -> bool:
    """Whether `module_parts(source)` reads the statements one by one (a view told the split)."""
    with _SPLITS_LOCK:
        return source in _SPLITS


def module_parts(source: bytes) -> list[ast.Module] | None:
    """The module as parts, in order: its top-level statements each parsed alone (and kept)
    where its split is known, else one part, the whole text parsed; None when it does not parse
    (a statement that does not parse alone does not parse in the whole text either). Read-only,
    like `module_tree`: later texts share the parts of the statements they did not change."""
    with _SPLITS_LOCK:
        split = _SPLITS.get(source)
    if split is None:
        tree = _whole_tree(source)
        return None if tree is None else [tree]
    parts = []
    for row, text in split:
        part = _PARTS.get(row, text)
        if part is None:
            return None
        parts.append(part)
    return parts


@lru_cache(maxsize=16)
def module_tree(source: bytes) -> ast.Module | None:
    """The module's syntax tree (do not modify it: other stages, and later texts, read the same
    objects); None when the text does not parse."""
    parts = module_parts(source)
    if parts is None:
        return None
    if len(parts) == 1:
        return parts[0]
    return ast.Module(body=[stmt for part in parts for stmt in part.body], type_ignores=[])


@lru_cache(maxsize=4)
def _whole_tree(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except _UNPARSABLE:
        return None


def part_answers(source: bytes, key: Hashable, compute: Callable[[ast.Module], T]) -> list[T] | None:
    """`compute(part)` for every part of the module, each kept on its part (so a later text
    computes it for the statements it changed only); None when the module does not parse.
    `compute` must read no position (line or column) of the part: with the module's split
    known, each statement's answer is computed once per text, wherever the statement stands
    (a line opened above it moves it, and its answer stays)."""
    with _SPLITS_LOCK:
        split = _SPLITS.get(source)
    if split is None:
        tree = _whole_tree(source)
        parts = None if tree is None else [tree]
    else:
        parts = [_UNPLACED.get(0, text) for _, text in split]
    if parts is None or any(p is None for p in parts):
        return None
    return [on_node(part, key, lambda part=part: compute(part)) for part in parts]  # type: ignore[arg-type]


#: one node's place in a breadth-first walk of its part: (depth below the module, visit index)
Place = tuple[int, int]


def walk_places(part: ast.Module) -> list[tuple[Place, ast.AST, ast.AST | None]]:
    """Every node of `part` in `ast.walk` order, with its place and its parent (None: `part`)."""
    out: list[tuple[Place, ast.AST, ast.AST | None]] = []
    level: list[tuple[ast.AST, ast.AST | None]] = [(part, None)]
    depth = 0
    while level:
        nxt: list[tuple[ast.AST, ast.AST | None]] = []
        for node, parent in level:
            out.append(((depth, len(out)), node, parent))
            # `iter_child_nodes`'s order, read off the fields without its generator per node
            for name in node._fields:
                v = getattr(node, name, None)
                if isinstance(v, list):
                    nxt.extend((c, node) for c in v if isinstance(c, ast.AST))
                elif isinstance(v, ast.AST):
                    nxt.append((v, node))
        level, depth = nxt, depth + 1
    return out


def bfs_merged(answers: Sequence[Sequence[tuple[Place, T]]]) -> list[T]:
    """Per-part items, each with its place in its part, in the order one `ast.walk` of the whole
    module meets them: by depth, then by part, then by the order within the part (a walk visits
    a level's nodes in the order of their parts, which is the statements' order)."""
    keyed = [(place[0], i, place[1], item) for i, items in enumerate(answers) for place, item in items]
    keyed.sort(key=lambda t: t[:3])
    return [t[3] for t in keyed]
