"""What the rules read of the module outside the kernel, recorded while a kernel is judged.

A few rules look at host code to set a finding's severity: the names a launch passes
(untold_extent.py), the buffers a launcher hands from one kernel to the next
(scratch_buffer.py), the negative fills of the tensor behind a loaded index
(index_evidence.py). Those reads are the only way host code outside the launch binding reaches
a kernel's findings, so the kernel cache's second level (cache_keys.BoundLookup) keys findings
by the binding alone and keeps, beside them, each such read with its answer: after an edit in
host code the findings are reused when every recorded read answers the same on the new text,
instead of interpreting the kernel again because some host function's text changed.

Each reading function is wrapped with `host_read`; its answer must depend on the source and
its arguments only, and hold no position (names and values, never offsets or rows).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

#: (the wrapped function, its arguments after the source, its answer)
Read = tuple[Callable[..., Any], tuple[Any, ...], Any]

_log: ContextVar[list[Read] | None] = ContextVar("argus_rule_reads", default=None)

F = TypeVar("F", bound=Callable[..., Any])


def host_read(fn: F) -> F:
    """Record each call of `fn(source, *args)` while `recording()` is active (memoized answers
    included: wrap outside any `lru_cache`)."""

    @functools.wraps(fn)
    def wrapper(source: bytes, *args: Any) -> Any:
        answer = fn(source, *args)
        log = _log.get()
        if log is not None:
            log.append((fn, args, answer))
        return answer

    return wrapper  # type: ignore[return-value]


@contextmanager
def recording() -> Iterator[list[Read]]:
    """The reads made inside the block, in order (nested blocks each get their own)."""
    log: list[Read] = []
    token = _log.set(log)
    try:
        yield log
    finally:
        _log.reset(token)


def read_alike(reads: list[Read], source: bytes) -> bool:
    """Whether every recorded read answers the same on `source`."""
    return all(fn(source, *args) == answer for fn, args, answer in reads)
