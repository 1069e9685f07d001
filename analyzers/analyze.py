"""Per-module driver (placeholder until the interpreter lands): AR002 on syntax errors."""

from __future__ import annotations

from analyzers.engine import KernelCache
from analyzers.findings import Finding
from analyzers.frontend.parse import first_error, parse, span_of
from analyzers.frontend.queries import find_kernels
from analyzers.registry import RULES


def analyze_module(source: bytes, cache: KernelCache | None = None, tree=None) -> list[Finding]:
    tree = tree or parse(source)
    out = []
    for site in find_kernels(tree.root_node):
        err = first_error(site.node)
        if err is not None:
            info = RULES["AR002"]
            out.append(Finding("AR002", info.name, info.severity, site.name, span_of(err),
                               f"kernel `{site.name}` does not parse here; nothing else is reported for it"))
    return out


def describe_variable(source: bytes, byte_offset: int) -> str | None:
    return None
