"""Hover: what the interpreter knows about a kernel variable (filled in by the interpreter's trace)."""

from __future__ import annotations


def describe(source: bytes, byte_offset: int) -> str | None:
    return None
