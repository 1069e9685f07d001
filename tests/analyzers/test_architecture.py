"""The shape of `analyzers/`: no import cycle, no import inside a function, no module over 600
lines, no function over 80, and the layering of DESIGN.md (analyzers imports nothing else of
ours and no LSP). Each check reads the source with `ast`, so it fails on the file that breaks it.

Modules and functions that were over the limits when the limits were set are listed in
`KNOWN_LARGE` with their size then: they may shrink, never grow, and a new entry is a failure
(the list only gets shorter)."""

from __future__ import annotations

import ast
from pathlib import Path

from argus.analyzers.judge import check_precedence_declarations

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "analyzers"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
FORBIDDEN_IMPORTS = ("argus_lsp", "agent", "knowledge", "pygls", "lsprotocol", "torch", "triton")

# "path" or "path:function" -> its size when the limits were set (may only shrink)
KNOWN_LARGE: dict[str, int] = {
}


def module_name(path: Path, base: Path) -> str:
    rel = path.relative_to(base).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root.parent): p for p in sorted(root.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports(tree: ast.Module, known: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every runtime import of `tree`; an
    import under `if TYPE_CHECKING:` runs only for type checkers and is left out."""
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                for a in child.names:
                    sub = f"{child.module}.{a.name}"
                    out.append((sub if sub in known else child.module, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for target, _line, _in_fn in imports(ast.parse(path.read_text()), set(mods)):
            if target in mods and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def oversized(root: Path = PACKAGE) -> dict[str, int]:
    """Modules over MAX_MODULE_LINES and functions over MAX_FUNCTION_LINES, with their sizes."""
    out: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            out[rel] = lines
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if length > MAX_FUNCTION_LINES:
                    out[f"{rel}:{node.name}"] = length
    return out


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_no_import_inside_a_function() -> None:
    mods = modules()
    late = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in mods.values()
        for target, line, in_fn in imports(ast.parse(path.read_text()), set(mods))
        if in_fn
    ]
    assert late == []


def test_analyzers_import_nothing_else_of_ours() -> None:
    mods = modules()
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in mods.values()
        for target, line, _ in imports(ast.parse(path.read_text()), set(mods))
        if target.split(".")[0] in FORBIDDEN_IMPORTS
    ]
    assert bad == []


def test_sizes_within_limits_or_shrinking() -> None:
    over = oversized()
    new = {k: v for k, v in over.items() if k not in KNOWN_LARGE}
    grown = {k: (KNOWN_LARGE[k], v) for k, v in over.items() if k in KNOWN_LARGE and v > KNOWN_LARGE[k]}
    assert new == {}, f"over the limits ({MAX_MODULE_LINES} lines a module, {MAX_FUNCTION_LINES} a function)"
    assert grown == {}, "known large modules or functions grew (was, now)"


def test_known_large_list_is_current() -> None:
    """An entry that is no longer over the limit is removed from the list, so it cannot regrow."""
    over = oversized()
    assert sorted(k for k in KNOWN_LARGE if k not in over) == []


# ---- the checks themselves must be able to fail ---------------------------------------------
def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_cycle_detection_finds_a_cycle(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "analyzers/__init__.py": "",
            "analyzers/a.py": "from analyzers.b import x\n",
            "analyzers/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from analyzers.c import y\nx = 1\n",
            "analyzers/c.py": "import analyzers.a\ny = 2\n",
            "analyzers/d.py": "def f():\n    from analyzers.d2 import z\n",
            "analyzers/d2.py": "from analyzers import d\nz = 3\n",
        },
    )
    # a -> b -> (c only for type checkers): no cycle there; d -> d2 -> d (a late import) is one
    assert cycles(import_graph(pkg / "analyzers")) == [["analyzers.d", "analyzers.d2"]]


def test_size_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    pkg = _write(tmp_path, {"analyzers/long.py": f"def long():\n{body}\n"})
    assert oversized(pkg / "analyzers") == {"analyzers/long.py:long": MAX_FUNCTION_LINES + 1}


def test_precedence_declarations_name_rules_and_kinds_they_read() -> None:
    assert check_precedence_declarations() == []
