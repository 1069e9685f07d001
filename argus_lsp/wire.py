"""Frames between the language server and its check workers: an 8-byte length, then a pickle.

Pickle is safe here: both ends are this package, a parent and the child it started, over pipes
no one else holds. Reads and writes go straight to the file descriptors (no user-space buffer),
so `select` on a descriptor says truthfully whether a frame is waiting."""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

_HEADER = struct.Struct("<Q")


def write(fd: int, msg: Any) -> None:
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None  # the other end closed (or died)
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read(fd: int) -> Any:
    """The next message, or None once the other end has closed the pipe."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)
