"""Hover traces the server keeps: what each kernel's first program assigned, ready to describe.

A trace (`analyzers.trace`) is one run of a kernel's first program with every assignment
recorded; describing a name is then a lookup. The check worker computes the traces of the
kernels it checked when the user pauses and ships them rendered (`ShippedTrace`: the markdown of
every assignment and parameter, strings only, a few kB a kernel), so a hover after that
interprets nothing and never waits for the worker. A hover on a kernel with no trace yet
interprets that one program on the server's hover thread (`LocalTrace`, kept the same way); checks
run in another process, so it shares the GIL with no check.

Both kinds are kept in one LRU (`TRACE_MEMO_KERNELS`) by `trace_key`: the exact text of the
kernel, its launchers and helpers, so a trace answers for any document holding that text.
The answer is the same `describe_at` gives: the name's last assignment at or above the cursor's
line in the kernel, else its value when the program ended, described by `describe_value`.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from argus.analyzers import KernelCache
from argus.analyzers.describe import describe_value
from argus.analyzers.frontend.queries import KernelSite
from argus.analyzers.module_view import ModuleView, build_module_view
from argus.analyzers.pipeline import identifier_in_kernel
from argus.analyzers.trace import KernelTrace, trace_kernel, trace_key
from tree_sitter import Tree

TRACE_MEMO_KERNELS = 256  # kernel traces the server keeps (rendered ones are a few kB each)


class Trace(Protocol):
    def describe(self, name: str, line: int) -> str | None: ...


def _value_at(values: dict[tuple[str, int], Any], params: dict[str, Any], name: str, line: int) -> Any:
    found = [(ln, v) for (n, ln), v in values.items() if n == name and ln <= line]
    return max(found, key=lambda x: x[0])[1] if found else params.get(name)


@dataclass(frozen=True)
class LocalTrace:
    """A trace interpreted in this process: values described on demand."""

    trace: KernelTrace

    def describe(self, name: str, line: int) -> str | None:
        t = self.trace
        value = _value_at(t.values, t.params, name, line)
        return None if value is None else describe_value(name, value, t.sizes, t.pid)


@dataclass(frozen=True)
class ShippedTrace:
    """A trace rendered where it was computed (the check worker): strings only."""

    values: dict[tuple[str, int], str]
    params: dict[str, str]

    @classmethod
    def of(cls, trace: KernelTrace) -> ShippedTrace:
        def text(name: str, value: Any) -> str:
            return describe_value(name, value, trace.sizes, trace.pid)

        return cls(
            {(n, ln): text(n, v) for (n, ln), v in trace.values.items()},
            {n: text(n, v) for n, v in trace.params.items() if v is not None},
        )

    def describe(self, name: str, line: int) -> str | None:
        return _value_at(self.values, self.params, name, line)


def trace_memo() -> KernelCache:
    return KernelCache(capacity=TRACE_MEMO_KERNELS)


def _interpret(view: ModuleView, site: KernelSite) -> KernelTrace | None:
    scratch = KernelCache(capacity=1)
    trace_kernel(view, site, "", site.node.start_point[0], scratch)  # runs it and keeps it
    return scratch.get(trace_key(view, site))


def kernel_traces(source: bytes, tree: Tree, skip: Container[str]) -> Iterator[tuple[str, ShippedTrace]]:
    """(trace_key, rendered trace) of every kernel of the text whose key is not in `skip`."""
    view = build_module_view(source, tree)
    for site in view.sites:
        key = trace_key(view, site)
        if key in skip:
            continue
        trace = _interpret(view, site)
        if trace is not None:
            yield key, ShippedTrace.of(trace)


def describe(source: bytes, offset: int, tree: Tree | None, memo: KernelCache) -> str | None:
    """Markdown for the kernel variable at byte `offset`, from `memo`'s trace of its kernel when
    there is one, else from one interpretation kept there for the next hover."""
    found = identifier_in_kernel(source, offset, tree)
    if found is None:
        return None
    node, view, site = found
    view.memo = memo.launch_texts  # the launchers' key texts, kept between hovers (launch_texts.py)
    view.snippets = memo.snippets
    key = trace_key(view, site)
    trace: Trace | None = memo.get(key)
    if trace is None:
        found = _interpret(view, site)
        if found is None:
            return None
        trace = LocalTrace(found)
        memo.put(key, trace)
    name = node.text.decode("utf-8", "replace") if node.text else ""
    return trace.describe(name, node.start_point[0] - site.node.start_point[0] + 1)
