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
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from argus.analyzers.model.kernel import SourceMap, parse_snippet

MEMO_SNIPPETS = 512  # trees kept per document (launchers, host functions, kernels and helpers)

T = TypeVar("T")


class SnippetMemo:
    """Trees of one document's definitions, each kind in a small thread-safe LRU: launchers by
    (row, the bytes from the row's start to the snippet's end), host functions by their text,
    jit code by (row, bytes, imports); a placed tree is held with the indent dedent removed."""

    def __init__(self, capacity: int = MEMO_SNIPPETS) -> None:
        self._data: OrderedDict[Hashable, Any] = OrderedDict()  # (kind, key) -> what was built
        self._lock = threading.Lock()
        self.capacity = capacity

    def _kept(self, key: Hashable, build: Callable[[], T]) -> T:
        """`build()` (not kept when it raises), or what it gave for `key` before."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]  # type: ignore[no-any-return]
        found = build()
        with self._lock:
            self._data[key] = found
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
        return found

    def parse(
        self, source: bytes, start_byte: int, end_byte: int, starts: list[int], row0: int
    ) -> tuple[ast.Module, SourceMap]:
        """`parse_snippet`'s answer (it raises as that does), the tree shared with the last
        parse of the same bytes at the same row."""

        def build() -> tuple[ast.Module, int]:
            tree, smap = parse_snippet(source, start_byte, end_byte, starts, row0)
            return tree, smap.indent

        tree, indent = self._kept(("launcher", row0, source[starts[row0] : end_byte]), build)
        return tree, SourceMap(source, starts, row0, indent)

    def function(self, text: bytes, parse: Callable[[], ast.FunctionDef | None]) -> ast.FunctionDef | None:
        """A host function a launcher calls, parsed alone (`parse()`; None: it does not parse
        or is too long to follow): the tree of the last parse of the same text. Its positions
        are its own (dedented, from its `def`), so a function that moved keeps its tree."""
        return self._kept(("function", text), parse)

    def jit_function(
        self, source: bytes, node_end: int, starts: list[int], row0: int, imports: str,
        build: Callable[[], tuple[ast.FunctionDef, SourceMap]],
    ) -> tuple[ast.FunctionDef, SourceMap]:
        """A kernel or jit helper parsed alone and rewritten by the file's imports (`build()`, which
        raises as `parse_snippet` does): the tree of the last check where its bytes, its row and
        the imports (`imports`, their text) are the same, with a source map over the new text."""

        def placed() -> tuple[ast.FunctionDef, int]:
            func, smap = build()
            return func, smap.indent

        func, indent = self._kept(("jit", row0, source[starts[row0] : node_end], imports), placed)
        return func, SourceMap(source, starts, row0, indent)
