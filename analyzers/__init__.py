"""Argus analyzers: Triton source in, `Finding`s out. Pure Python + numpy; imports nothing of ours.

Public entry points (the CLI, the language server and the agent use only these):
- `check_source(text, path, select=, ignore=)` -> sorted list of `Finding`
- `list_kernels(text)` -> the kernels in a file with their spans
- `describe_at(text, byte_offset)` -> what the interpreter knows about the name under the cursor
- `kernel_timeout(seconds)`: the per-kernel time budget of the checks inside it
- `RULES` (code -> RuleInfo with name, severity and documentation)
"""

from __future__ import annotations

from argus.analyzers.cache import KernelCache
from argus.analyzers.findings import Finding, Fix, Related, Severity, Span, TextEdit
from argus.analyzers.interp.budget import DEFAULT_KERNEL_TIMEOUT, kernel_timeout
from argus.analyzers.pipeline import check_source, describe_at, list_kernels
from argus.analyzers.registry import RULES, RuleInfo, selected, unknown_codes

__all__ = [
    "DEFAULT_KERNEL_TIMEOUT",
    "RULES",
    "Finding",
    "Fix",
    "KernelCache",
    "Related",
    "RuleInfo",
    "Severity",
    "Span",
    "TextEdit",
    "check_source",
    "describe_at",
    "kernel_timeout",
    "list_kernels",
    "selected",
    "unknown_codes",
]
