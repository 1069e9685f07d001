"""What a module's import statements bind, read from its text (nothing is imported).

Two users: `project.py` follows imports of the package's own modules to their source, and the
kernel's code is rewritten so that names bound to Triton's own modules and functions read as the
interpreter knows them (`import triton.language.extra.libdevice as tldevice` makes `tldevice.tanh`
`libdevice.tanh`; `from triton.language.math import rsqrt` makes `rsqrt(x)` `tl.rsqrt(x)`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tree_sitter import Node

_UNPARSABLE = (SyntaxError, UnicodeDecodeError, ValueError, RecursionError, IndexError)

#: Triton's modules, by the head the interpreter reads them under
TRITON_MODULES = {
    "triton": "triton",
    "triton.language": "tl",
    "triton.language.math": "tl",
    "triton.language.core": "tl",
    "triton.language.standard": "tl",
    "triton.language.extra": "tl",
    "triton.language.extra.libdevice": "libdevice",
    "triton.language.extra.cuda.libdevice": "libdevice",
    "triton.language.extra.hip.libdevice": "libdevice",
    "triton.language.extra.cuda": "libdevice",
}


@dataclass(frozen=True)
class ImportRef:
    """What one name bound by an import statement refers to: module `module` (absolute), or its
    attribute `attr` (a function, or a submodule: which one is decided when it is looked up)."""

    module: str
    attr: str | None = None

    @property
    def dotted(self) -> str:
        return self.module if self.attr is None else f"{self.module}.{self.attr}"


def read_imports(source: bytes, root: Node, package: str) -> dict[str, ImportRef]:
    """Names bound by the module's import statements (top level, or in a top-level try/if),
    relative ones made absolute against `package` (the importing module's package). A name
    bound twice (an `if`/`else` of two imports) keeps the first binding."""
    out: dict[str, ImportRef] = {}
    stack = list(root.children)
    while stack:
        node = stack.pop(0)
        if node.type in ("try_statement", "if_statement", "block", "else_clause", "except_clause"):
            stack[:0] = list(node.children)
            continue
        if node.type not in ("import_statement", "import_from_statement"):
            continue
        try:
            stmt = ast.parse(source[node.start_byte : node.end_byte].decode("utf-8")).body[0]
        except _UNPARSABLE:
            continue
        for name, ref in _bound(stmt, package):
            out.setdefault(name, ref)
    return out


def _bound(stmt: ast.stmt, package: str) -> list[tuple[str, ImportRef]]:
    if isinstance(stmt, ast.Import):
        return [(a.asname or a.name, ImportRef(a.name)) for a in stmt.names if a.asname or "." not in a.name]
    if isinstance(stmt, ast.ImportFrom):
        base = absolute(stmt.module, stmt.level, package)
        if base is not None:
            return [(a.asname or a.name, ImportRef(base, a.name)) for a in stmt.names if a.name != "*"]
    return []


def absolute(module: str | None, level: int, package: str) -> str | None:
    """`from ..x import` in package `a.b` -> `a.x`; None above the top-level package."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None  # above the top-level package (Python refuses it too)
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None


def qualify_triton_names(func: ast.FunctionDef, imports: dict[str, ImportRef]) -> None:
    """Rewrite, in place, the names `func` reads that its module bound to Triton's own modules
    or functions, as the interpreter knows them; a name the function binds itself is left."""
    renames: dict[str, tuple[str, str | None]] = {}  # name -> (head, attribute or None)
    for name, ref in imports.items():
        head = TRITON_MODULES.get(ref.dotted)
        if head is not None:
            if head != name:
                renames[name] = (head, None)  # a module: `tldevice` -> `libdevice`
        elif ref.attr is not None and ref.module in TRITON_MODULES:
            renames[name] = ("tl", ref.attr)  # a function: `rsqrt` -> `tl.rsqrt`
    if not renames:
        return
    args = func.args
    own = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    own |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    wanted = {k: v for k, v in renames.items() if k not in own}
    if wanted:
        NameRenamer(wanted).visit(func)


class NameRenamer(ast.NodeTransformer):
    """Names read (`ast.Load`) renamed in place: `x` -> `y` for ("y", None), `x` -> `m.f` for
    ("m", "f") (an import's alias resolved; a predicate's parameters renamed to the caller's)."""

    def __init__(self, renames: dict[str, tuple[str, str | None]]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        new = self.renames.get(node.id)
        if new is None or not isinstance(node.ctx, ast.Load):
            return node
        head = ast.copy_location(ast.Name(id=new[0], ctx=ast.Load()), node)
        if new[1] is None:
            return head
        return ast.copy_location(ast.Attribute(value=head, attr=new[1], ctx=ast.Load()), node)
