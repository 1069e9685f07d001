"""The pipeline: parse -> kernel sites -> per-kernel analysis -> suppressions -> selection.

Each kernel is analyzed on its own and cached by the text it depends on (its own source, the
helpers it calls, its launch sites), so an edit re-analyzes only the kernels it touched.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tree_sitter import Tree

from analyzers.findings import Finding, Span
from analyzers.frontend.parse import parse, span_of
from analyzers.frontend.queries import find_kernels
from analyzers.registry import RULES, selected


@dataclass(frozen=True)
class KernelInfo:
    name: str
    span: Span  # the whole decorated definition
    name_span: Span


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


def _as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def list_kernels(text: str | bytes) -> list[KernelInfo]:
    tree = parse(_as_bytes(text))
    out = []
    for site in find_kernels(tree.root_node):
        name_node = site.function.child_by_field_name("name")
        out.append(KernelInfo(site.name, span_of(site.node), span_of(name_node or site.function)))
    return out


def check_source(
    text: str | bytes,
    path: str = "<string>",
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    cache: KernelCache | None = None,
    tree: Tree | None = None,
    launches: dict[str, list[Any]] | None = None,
) -> list[Finding]:
    """Check every Triton kernel in one Python source text. Never raises on bad kernel code.

    `launches` maps a kernel name to launches recorded from a real run of it (`argus record`,
    `analyzers.model.launch_file`), which bind kernels whose launcher the source does not show.

    `tree` may be a tree-sitter tree the caller already holds for exactly this text (the language
    server re-parses incrementally and passes it), which saves the parse."""
    from analyzers.analyze import analyze_module
    from analyzers.suppressions import apply_suppressions

    source = _as_bytes(text)
    findings = analyze_module(source, cache=cache, tree=tree, launches=launches)
    findings = apply_suppressions(source, findings)
    sel = list(select) if select is not None else None
    ign = list(ignore) if ignore is not None else None
    findings = [f for f in findings if selected(f.code, sel, ign)]
    return sorted(findings, key=Finding.sort_key)


def describe_at(text: str | bytes, byte_offset: int) -> str | None:
    """Markdown describing the kernel variable at `byte_offset` (tag, shape, dtype, mask)."""
    from analyzers.analyze import describe_variable

    return describe_variable(_as_bytes(text), byte_offset)


def cache_key(*parts: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


__all__ = ["RULES", "KernelCache", "KernelInfo", "cache_key", "check_source", "describe_at", "list_kernels"]
