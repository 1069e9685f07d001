"""The per-kernel cache: findings keyed by a hash of the text a kernel's analysis reads, and
(a second level, cache_keys.BoundLookup) by what the kernel's launch binding produced.

An edit re-analyzes only the kernels it touched; a kernel that only moved gets its cached
findings back, shifted by the rows and bytes it moved. The kernel, its launchers and its helpers
are each keyed on their own text (and column), not on where they sit relative to each other, so a
line typed in one kernel above another kernel's launcher moves that launcher's findings and
re-analyzes nothing.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from argus.analyzers.findings import Finding, Span, TextEdit
from argus.analyzers.launch_texts import LaunchTextMemo
from argus.analyzers.layout import remap_findings
from argus.analyzers.snippet_memo import SnippetMemo


class KernelCache:
    """A small thread-safe LRU of per-kernel findings keyed by a hash of what the kernel reads."""

    def __init__(self, capacity: int = 512) -> None:
        self._data: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self.bound_hits = 0  # the second level's (cache_keys.BoundLookup), counted apart
        self.bound_misses = 0
        #: each launcher's key texts, kept while what they were gathered from is unchanged
        self.launch_texts = LaunchTextMemo()
        #: launcher trees, kept with what the binder learnt of them (snippet_memo.py)
        self.snippets = SnippetMemo()

    def get(self, key: str) -> Any:
        """The entry for a kernel's text (a miss: the binding is looked up next)."""
        found = self._lookup(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def get_bound(self, key: str) -> Any:
        """The entry for a kernel's launch binding (a miss: the kernel is interpreted)."""
        found = self._lookup(key)
        if found is None:
            self.bound_misses += 1
        else:
            self.bound_hits += 1
        return found

    def _lookup(self, key: str) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            return None

    def put(self, key: str, findings: Any) -> None:
        with self._lock:
            self._data[key] = findings
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)


def cache_key(*parts: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


#: where one piece of text the analysis reads sits in the file: (start byte, end byte, start row)
Region = tuple[int, int, int]


def shift_findings(findings: list[Finding], old: Sequence[Region], new: Sequence[Region]) -> list[Finding]:
    """Move cached findings with the text they point into (rows and bytes shift; columns do not).

    `old` and `new` list the same pieces (the kernel first, then its launchers and helpers) where
    they sat when the findings were computed and where they sit now. Each span moves with the
    innermost piece that held it, so a launcher that moved relative to its kernel carries its own
    findings along; a span in none of them moves with the kernel."""
    if list(old) == list(new):
        return findings

    def moved(start: int) -> tuple[int, int]:
        holding = [i for i, (lo, hi, _row) in enumerate(old) if lo <= start <= hi]
        best = min(holding, key=lambda i: old[i][1] - old[i][0], default=0)
        return new[best][0] - old[best][0], new[best][2] - old[best][2]

    def sp(s: Span) -> Span:
        dbyte, drow = moved(s.start_byte)
        return Span(
            s.start_byte + dbyte,
            s.end_byte + dbyte,
            (s.start_point[0] + drow, s.start_point[1]),
            (s.end_point[0] + drow, s.end_point[1]),
        )

    def edit(e: TextEdit) -> TextEdit:
        dbyte = moved(e.start_byte)[0]
        return TextEdit(e.start_byte + dbyte, e.end_byte + dbyte, e.new_text)

    return remap_findings(findings, sp, edit)
