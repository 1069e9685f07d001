"""Launcher functions parsed by their place and text, kept between checks of one document.

Every check builds a new module view, and the view parsed every launcher it read again. The
binder keeps what it learns of a launcher's tree on the tree itself (model/node_memo.py: the
ranks its uses imply, its local values, which tensors it passes on before a launch), so each new
tree started those answers over: a token typed in a kernel re-derived them for launchers the
edit never touched, and an edit in one launcher for every other launcher of the kernels it
re-bound. `SnippetMemo` gives a check the tree the previous check parsed from the same bytes at
the same row (and a fresh source map over the new text), so those answers carry over an edit
elsewhere. Keyed by the row too: two launchers of equal text stay two trees, and a launcher
that moved is parsed again. The trees are read-only (node_memo.py's rule); rewritten copies are
made with `fresh_copy`. Launchers, autograd `forward`s and the host functions launchers call
(`function`, by text alone: their positions are their own) are kept as parsed; kernels and jit
helpers (`jit_function`) as rewritten by the file's imports (`qualify_triton_names`, the one edit
made to a tree after parsing), keyed by those imports too: the kernel scan and the unbound-name
rule keep their answers on those trees, and a launcher edit re-binds kernels whose text it did not
change.
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Callable

from argus.analyzers.model.kernel import SourceMap, parse_snippet

MEMO_SNIPPETS = 256  # launcher trees kept per document


class SnippetMemo:
    """Parsed launcher snippets by (row, the bytes from the row's start to the snippet's end),
    with the indent dedent removed; a small thread-safe LRU."""

    def __init__(self, capacity: int = MEMO_SNIPPETS) -> None:
        self._data: OrderedDict[tuple[int, bytes], tuple[ast.Module, int]] = OrderedDict()
        self._functions: OrderedDict[bytes, ast.FunctionDef | None] = OrderedDict()
        self._jit: OrderedDict[tuple[int, bytes, str], tuple[ast.FunctionDef, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def parse(
        self, source: bytes, start_byte: int, end_byte: int, starts: list[int], row0: int
    ) -> tuple[ast.Module, SourceMap]:
        """`parse_snippet`'s answer (it raises as that does), the tree shared with the last
        parse of the same bytes at the same row."""
        key = (row0, source[starts[row0] : end_byte])
        with self._lock:
            held = self._data.get(key)
            if held is not None:
                self._data.move_to_end(key)
        if held is None:
            tree, smap = parse_snippet(source, start_byte, end_byte, starts, row0)
            held = (tree, smap.indent)
            with self._lock:
                self._data[key] = held
                while len(self._data) > self.capacity:
                    self._data.popitem(last=False)
        return held[0], SourceMap(source, starts, row0, held[1])

    def function(
        self, text: bytes, parse: Callable[[], ast.FunctionDef | None]
    ) -> ast.FunctionDef | None:
        """A host function a launcher calls, parsed alone (`parse()`; None: it does not parse
        or is too long to follow): the tree of the last parse of the same text. Its positions
        are its own (dedented, from its `def`), so a function that moved keeps its tree."""
        with self._lock:
            if text in self._functions:
                self._functions.move_to_end(text)
                return self._functions[text]
        found = parse()
        with self._lock:
            self._functions[text] = found
            while len(self._functions) > self.capacity:
                self._functions.popitem(last=False)
        return found

    def jit_function(
        self, source: bytes, node_start: int, node_end: int, starts: list[int], row0: int, imports: str,
        build: Callable[[], tuple[ast.FunctionDef, SourceMap]],
    ) -> tuple[ast.FunctionDef, SourceMap]:
        """A kernel or jit helper parsed alone and rewritten by the file's imports (`build()`, which
        raises as `parse_snippet` does): the tree of the last check where its bytes, its row and
        the imports (`imports`, their text) are the same, with a source map over the new text."""
        key = (row0, source[starts[row0] : node_end], imports)
        with self._lock:
            held = self._jit.get(key)
            if held is not None:
                self._jit.move_to_end(key)
        if held is None:
            func, smap = build()
            held = (func, smap.indent)
            with self._lock:
                self._jit[key] = held
                while len(self._jit) > self.capacity:
                    self._jit.popitem(last=False)
        return held[0], SourceMap(source, starts, row0, held[1])
