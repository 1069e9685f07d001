"""Editing the user's file by top-level name: how a reply or a rewrite becomes a whole candidate file.

A code block replaces the module-level definitions of the same names (functions, classes, simple
assignments) in the user's file, keeps the file's other text byte for byte (comments included), appends
definitions that are new before an `if __name__ == "__main__":` block, and adds imports the file lacks
at the end of its import block. This is the contract the `llm` prompt states to the model.
"""

from __future__ import annotations

import ast
import difflib
import re

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


class SpliceError(ValueError):
    """A code block that cannot be merged into the file (no code, a syntax error)."""


def extract_code(reply: str) -> str:
    """The first fenced python block of a model reply (the longest when several are python)."""
    blocks = _FENCE.findall(reply or "")
    if not blocks:
        raise SpliceError("the reply has no fenced ```python code block")
    return max(blocks, key=len)


def top_level_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) line range of a statement including its decorators."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    return start, node.end_lineno or node.lineno


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


def splice(original: str, code: str) -> str:
    """`original` with the top-level definitions of `code` put in place of the ones of the same name."""
    try:
        new_tree = ast.parse(code)
    except SyntaxError as exc:
        raise SpliceError(f"the code block does not parse: line {exc.lineno}: {exc.msg}") from None
    old_tree = ast.parse(original)
    code_lines = code.splitlines(keepends=True)
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    defined = {}
    for node in old_tree.body:
        for name in top_level_names(node):
            defined[name] = node
    have_imports = {ast.dump(n) for n in old_tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    replacements: dict[int, tuple[int, list[str]]] = {}
    appended: list[str] = []
    new_imports: list[str] = []
    for node in new_tree.body:
        s, e = _span(code_lines, node)
        text = "".join(code_lines[s:e])
        if not text.endswith("\n"):
            text += "\n"
        if isinstance(node, ast.Import | ast.ImportFrom):
            if ast.dump(node) not in have_imports:
                new_imports.append(text)
            continue
        names = top_level_names(node)
        target = next((defined[n] for n in names if n in defined), None)
        if target is None:
            if names:
                appended.append("\n\n" + text)
            continue
        ts, te = _span(lines, target)
        replacements[ts] = (te, [text])
    if not replacements and not appended:
        raise SpliceError("the code block defines no function, class or constant")
    out: list[str] = []
    i = 0
    main_at = next((_span(lines, n)[0] for n in old_tree.body if _is_main_guard(n)), len(lines))
    last_import = max((_span(lines, n)[1] for n in old_tree.body if isinstance(n, ast.Import | ast.ImportFrom)), default=0)
    while i < len(lines):
        if i == main_at and appended:
            out.extend(appended)
            out.append("\n\n")
            appended = []
        if i in replacements:
            end, text = replacements[i]
            out.extend(text)
            i = end
            continue
        out.append(lines[i])
        i += 1
        if i == last_import and new_imports:
            out.extend(new_imports)
            new_imports = []
    if new_imports:
        out[:0] = new_imports
    out.extend(appended)
    result = "".join(out)
    ast.parse(result)  # the merge of two parsing texts parses; a failure here is our bug, not the model's
    return result


def unified_diff(old: str, new: str, path: str) -> str:
    """The patch a user reviews: `git apply`-able unified diff of one file."""
    return "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    )
