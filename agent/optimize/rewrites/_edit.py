"""Small helpers the rewrites share: find the kernel, its launcher and launch call; replace text by span."""

from __future__ import annotations

import ast


def function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def launch_calls(launcher: ast.FunctionDef, kernel: str) -> list[ast.Call]:
    """Every `kernel[grid](...)` call inside the launcher."""
    out = []
    for node in ast.walk(launcher):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            base = node.func.value
            if isinstance(base, ast.Name) and base.id == kernel:
                out.append(node)
    return out


def offsets(source: str) -> list[int]:
    """Byte... character offset of each line start, for ast (line, col) -> index."""
    starts, total = [0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def span(source: str, node: ast.AST) -> tuple[int, int]:
    """Character range of a node (ast columns are UTF-8 bytes; kernels are ASCII in practice)."""
    starts = offsets(source)
    line_start = starts[node.lineno - 1]
    end_start = starts[node.end_lineno - 1]
    first = source[line_start:].encode()[: node.col_offset].decode(errors="ignore")
    last = source[end_start:].encode()[: node.end_col_offset].decode(errors="ignore")
    return line_start + len(first), end_start + len(last)


def replace(source: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, text) edits."""
    out, pos = [], 0
    for start, end, text in sorted(edits):
        out.append(source[pos:start])
        out.append(text)
        pos = end
    out.append(source[pos:])
    return "".join(out)
