"""The per-kernel cache: findings keyed by a hash of the text a kernel's analysis reads.

An edit re-analyzes only the kernels it touched; a kernel that only moved gets its cached
findings back, shifted by the rows and bytes it moved.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from argus.analyzers.findings import Finding, Fix, Related, Span, TextEdit


class KernelCache:
    """A small thread-safe LRU of per-kernel findings keyed by a hash of what the kernel reads."""

    def __init__(self, capacity: int = 512) -> None:
        self._data: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
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


def shift_findings(findings: list[Finding], dbyte: int, drow: int) -> list[Finding]:
    """Move cached findings with their kernel (rows and bytes shift; columns do not)."""
    if not dbyte and not drow:
        return findings

    def sp(s: Span) -> Span:
        return Span(
            s.start_byte + dbyte,
            s.end_byte + dbyte,
            (s.start_point[0] + drow, s.start_point[1]),
            (s.end_point[0] + drow, s.end_point[1]),
        )

    out = []
    for f in findings:
        fix = None
        if f.fix is not None:
            fix = Fix(
                f.fix.title,
                tuple(TextEdit(e.start_byte + dbyte, e.end_byte + dbyte, e.new_text) for e in f.fix.edits),
            )
        out.append(
            replace(
                f, span=sp(f.span), fix=fix, related=tuple(Related(sp(r.span), r.message) for r in f.related)
            )
        )
    return out
