"""Memory given back when the last document closes (the server and its check workers alike).

Kept apart from the server's features so that a check worker, which loads no LSP library, can
call it too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


def release_memory() -> None:
    """Collect cycles and ask glibc to return free heap pages to the system (no-op elsewhere)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return  # not glibc (musl, macOS): the memory stays reusable by this process
    trim(0)
