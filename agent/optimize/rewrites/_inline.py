"""Copy a library launcher and everything it needs into a user's file, under collision-free names.

Why: a candidate that imports `knowledge.kernels.X` works only where Argus is importable, and gate 1
would check a module the user never sees. Inlining makes the patched file self-contained: the chosen
launcher, the `@triton.jit` kernels and helpers it reaches, and the module-level constants and configs
they read, found with `ast` by following names from the launcher (across `from knowledge.kernels._common
import ...`). Each copied top-level name `n` becomes `_argus_n` (with a numeric suffix where the user's
file already has that name); names local to a function are left alone. Text is copied, not unparsed,
so the library's comments survive. A few host helpers that read the environment or the current stream
through modules a candidate may not use (`os`, `torch._C`) are replaced by the portable versions in
SUBSTITUTES. The library files are read, never imported or run.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from argus.agent.optimize.rewrites._edit import replace

PREFIX = "_argus_"
LIBRARY = "argus.knowledge.kernels"

#: (module, name) -> the portable text to inline instead of the library's own definition.
SUBSTITUTES: dict[tuple[str, str], str] = {
    (f"{LIBRARY}._common", "interpreting"): '''def interpreting() -> bool:
    """True under TRITON_INTERPRET=1 (Triton's own knob: the library's copy reads os.environ)."""
    return bool(triton.knobs.runtime.interpret)''',
    (f"{LIBRARY}._common", "stream_key"): '''def stream_key(device: torch.device) -> int:
    """The current stream's handle (0 on the CPU), read the way Triton's launcher reads it (the
    library's copy calls torch._C, which a candidate may not)."""
    if device.type != "cuda":
        return 0
    idx = device.index if device.index is not None else torch.cuda.current_device()
    return triton.runtime.driver.active.get_current_stream(idx)''',
    # The torch path of the MoE alignment is index bookkeeping (argsort, cumsum, searchsorted), which the
    # anti-cheat gate cannot tell from torch computing the result: the copy uses the one-program Triton
    # align for every size (slower above FUSED_ALIGN_MAX_WORK pairs x experts; gate 3 measures it).
    (f"{LIBRARY}.moe", "use_fused_align"): '''def use_fused_align(ids: torch.Tensor, num_experts: int, block_m: int) -> bool:
    """Always the one-program Triton align (the copy has no torch path to time it against)."""
    return True''',
    (f"{LIBRARY}.moe", "align_by_expert"): '''def align_by_expert(ids: torch.Tensor, num_experts: int, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sorted ids padded per expert and each row block's expert, from the one-program Triton align."""
    return align_fused(ids, num_experts, block_m)''',
}

#: import lines of the library -> the line the copy uses (collections.abc is not a module a candidate may add).
IMPORT_SUBSTITUTES = {"from collections.abc import Callable, Sequence": "from typing import Callable, Sequence"}


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    node: ast.stmt
    text: str  # the statement's source, with the comment lines right above it


@dataclass(frozen=True)
class Inlined:
    code: str  # the copied definitions, renamed, in library order
    entry: str  # the new name of the launcher
    imports: tuple[str, ...]  # import lines the copied code needs (`import math`, ...)


def module_path(module: str) -> Path:
    """The library module's file, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise LookupError(f"cannot find the library module {module}")
    return Path(spec.origin)


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _statement_text(lines: list[str], node: ast.stmt) -> str:
    """The statement (decorators included) and the comment block directly above it."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    while first > 0 and lines[first - 1].lstrip().startswith("#"):
        first -= 1
    return "".join(lines[first:node.end_lineno])


class Library:
    """The top-level definitions, library imports and plain imports of the library modules read so far."""

    def __init__(self) -> None:
        self.defs: dict[tuple[str, str], Definition] = {}
        self.aliases: dict[tuple[str, str], tuple[str, str]] = {}  # from-imported name -> its definition
        self.imports: dict[str, dict[str, str]] = {}  # module -> local name -> import line

    def load(self, module: str) -> None:
        if module in self.imports:
            return
        text = module_path(module).read_text()
        lines = text.splitlines(keepends=True)
        self.imports[module] = {}
        for node in ast.parse(text).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(LIBRARY):
                for a in node.names:
                    self.aliases[(module, a.asname or a.name)] = (node.module, a.name)
                    self.load(node.module)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                    for a in node.names:
                        local = a.asname or a.name.split(".")[0]
                        self.imports[module][local] = ast.get_source_segment(text, node) or ""
            else:
                for name in _defined_names(node):
                    self.defs[(module, name)] = Definition(module, name, node, _statement_text(lines, node))

    def resolve(self, module: str, name: str) -> tuple[str, str] | None:
        key = self.aliases.get((module, name), (module, name))
        return key if key in self.defs else None


def _local_names(fn: ast.FunctionDef) -> set[str]:
    """Parameters and assigned names of a function (and its nested functions): never renamed inside it."""
    out = set()
    for sub in ast.walk(fn):
        if isinstance(sub, ast.arg):
            out.add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            out.add(sub.id)
        elif isinstance(sub, ast.FunctionDef) and sub is not fn:
            out.add(sub.name)
    return out


def _global_loads(node: ast.stmt) -> list[ast.Name]:
    """The Name nodes of a statement that refer to module-level names (decorators and annotations too)."""
    scopes = [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef)]
    local = set().union(*(_local_names(f) for f in scopes)) if scopes else set()
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and (sub.id not in local or isinstance(node, ast.Assign | ast.AnnAssign)):
            out.append(sub)
    return out


def _closure(lib: Library, module: str, entry: str) -> tuple[list[Definition], set[tuple[str, str]]]:
    """Every definition the entry reaches, in library order, and the plain imports they read."""
    start = lib.resolve(module, entry)
    if start is None:
        raise LookupError(f"{module} has no top-level `{entry}`")
    seen, todo, needs_import = {start}, [start], set()
    while todo:
        d = lib.defs[todo.pop()]
        node = ast.parse(SUBSTITUTES[(d.module, d.name)]).body[0] if (d.module, d.name) in SUBSTITUTES else d.node
        for name in _global_loads(node):
            key = lib.resolve(d.module, name.id)
            if key is not None and key not in seen:
                seen.add(key)
                todo.append(key)
            elif key is None and name.id in lib.imports[d.module]:
                needs_import.add((d.module, name.id))
    order = list(lib.defs)
    chosen, done = [], set()
    for key in sorted(seen, key=order.index):
        d = lib.defs[key]
        if id(d.node) not in done:  # one statement may define several names
            done.add(id(d.node))
            chosen.append(d)
    return chosen, needs_import


def fresh_names(wanted: list[tuple[str, str]], taken: set[str]) -> dict[tuple[str, str], str]:
    """`_argus_<name>` for each (module, name), suffixed with a number where the name is taken."""
    out: dict[tuple[str, str], str] = {}
    for module, name in wanted:
        base = PREFIX + name.lstrip("_")
        new, i = base, 2
        while new in taken:
            new, i = f"{base}_{i}", i + 1
        taken.add(new)
        out[(module, name)] = new
    return out


def _renamed(lib: Library, d: Definition, names: dict[tuple[str, str], str]) -> str:
    """The definition's text with every module-level name it defines or reads replaced by its new name."""
    text = SUBSTITUTES.get((d.module, d.name), d.text)
    tree = ast.parse(text)
    node = tree.body[0]
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits = []
    for name in _global_loads(node):
        key = lib.resolve(d.module, name.id)
        if key in names:
            at = starts[name.lineno - 1] + name.col_offset
            edits.append((at, at + len(name.id), names[key]))
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        keyword = "def " if isinstance(node, ast.FunctionDef) else "class "
        at = text.index(keyword + node.name, starts[node.lineno - 1]) + len(keyword)
        edits.append((at, at + len(node.name), names[(d.module, node.name)]))
    return replace(text, edits).rstrip() + "\n"


def user_names(source: str) -> set[str]:
    """Every name the user's file binds or reads, so no copied name can shadow one of them."""
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)} | {
        n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def inline(module: str, entry: str, user_source: str) -> Inlined:
    """The launcher `module.entry` and its closure, renamed to fit into `user_source`."""
    lib = Library()
    lib.load(module)
    chosen, needs_import = _closure(lib, module, entry)
    wanted = [(d.module, n) for d in chosen for n in _defined_names(d.node)]
    names = fresh_names(wanted, user_names(user_source))
    code = "\n\n".join(_renamed(lib, d, names) for d in chosen)
    lines = {lib.imports[m][n] for m, n in needs_import}
    imports = tuple(sorted({IMPORT_SUBSTITUTES.get(line, line) for line in lines}))
    return Inlined(code, names[lib.resolve(module, entry)], imports)
