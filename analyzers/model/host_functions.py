"""Plain Python functions the launcher calls (`BLOCK, warps = calculate_settings(n)`,
`grid_size = _forward_grid_size(rows, cores)`, `x = prepare_input(x)`), followed by the host
evaluator as it follows the launcher itself.

Real launchers compute their block sizes, grids and outputs in small helpers of the same module
or of a `utils` module of the package. Without following them every value they return is
opaque, and the kernel is checked on guesses (an AR001 "the value of `BLOCK_SIZE` (unpack)").
A helper is evaluated with the same abstract values as the launcher: its parameters bound to
the call's arguments, its statements run until a `return`. What it does not establish stays
unknown: a `return` under a condition the evaluator cannot decide, a `raise` reached, a loop
that assigns or returns, give an opaque result or opaque names, never a guessed value.

The table of functions is gathered before evaluation (`gather_functions`), from the names the
launcher calls, then the names those functions call in their own modules, a bounded number in
all; each function keeps the table of its own module, so a name resolves where it is written.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from argus.analyzers.model.node_memo import on_node

MAX_HOST_FUNCTIONS = 48  # per launch site: a utility module's whole call graph is never followed
MAX_CALL_DEPTH = 6  # helpers calling helpers (and recursion) stop here: the result is opaque
MAX_CALLS = 400  # calls per evaluation of a launcher (a helper called in a loop of helpers...)


@dataclass(eq=False)
class HostFunction:
    """A plain function of the package: its definition and its module's table of functions."""

    node: ast.FunctionDef
    globals: dict[str, Any] = field(default_factory=dict)  # name -> HostFunction or a constant
    origin: str = ""  # "path:line", for messages


class FunctionSource(Protocol):
    """One module as the gatherer sees it: its key (path), text, module-level constants, and
    what a name written in it refers to."""

    key: str
    text: bytes

    def constants(self) -> dict[str, Any]: ...

    def constant(self, name: str) -> tuple[bool, Any]:
        """(True, value) when `name` (or `m.name`) written here is a module constant, of this
        module or imported from another one of the package; (False, None) otherwise."""
        ...

    def find(self, name: str) -> tuple[ast.FunctionDef, FunctionSource, str] | None:
        """`f` or `m.f` as written in this module -> (definition, its module, origin)."""
        ...


@dataclass
class LaunchFunctions:
    """What a launch site's evaluation may call: names of its module -> values (functions and
    constants), and the texts of the modules they came from (for cache keys)."""

    table: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, bytes] = field(default_factory=dict)
    functions: list[tuple[str, HostFunction]] = field(default_factory=list)  # (module key, function)

    def other_texts(self, home: str) -> dict[str, bytes]:
        """Texts the launch depends on besides its own file's: the other modules whole, and the
        functions of its own file (an edit elsewhere in the file leaves the key alone)."""
        out = {k: v for k, v in self.texts.items() if k != home}
        own = [_key_text(fn.node) for key, fn in self.functions if key == home]
        if own:
            out[f"{home}#host-functions"] = "\n".join(own).encode()
        return out


def _key_text(node: ast.FunctionDef) -> str:
    """A function's text for a cache key, docstring left out; kept on its tree (the snippet memo
    keeps an unchanged function's tree, and every check asks again for every kernel)."""
    return on_node(node, "key_text", lambda: ast.unparse(undocumented(node)))


def undocumented(node: ast.AST) -> ast.AST:
    """`node` without its docstring (a shallow copy; nothing reads a docstring, so typing in
    one leaves the key alone)."""
    body = getattr(node, "body", None)
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return node
    out = copy.copy(node)
    out.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return out


def called_names(nodes: Iterable[ast.AST]) -> set[str]:
    """`f` in `f(...)` and `m.f` in `m.f(...)`, anywhere under `nodes`."""
    out: set[str] = set()
    for root in nodes:
        out |= _names_under(root)[0]
    return out


def read_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names read under `nodes` (`x`, and `m.x` where `m` is a bare name): constants to look up."""
    out: set[str] = set()
    for root in nodes:
        out |= _names_under(root)[1]
    return out


def _names_under(root: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """(called, read) under one statement, kept on it: every launch site gathers its functions
    again in every check, mostly from statements whose trees the snippet memo kept."""
    return on_node(root, "called_and_read", lambda: _scan_names(root))


def _scan_names(root: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    called: set[str] = set()
    read: set[str] = set()
    for n in ast.walk(root):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name):
                called.add(n.func.id)
            elif isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                called.add(f"{n.func.value.id}.{n.func.attr}")
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            read.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            read.add(f"{n.value.id}.{n.attr}")
    return frozenset(called), frozenset(read)


def gather_functions(body: list[ast.stmt], home: FunctionSource) -> LaunchFunctions:
    """The functions `body` calls, and those they call, at most MAX_HOST_FUNCTIONS in all; and
    the module constants each of them reads (imported ones included)."""
    tables: dict[str, dict[str, Any]] = {}
    texts: dict[str, bytes] = {}
    made: dict[str, HostFunction] = {}  # by origin: one function reached under two names
    order: list[tuple[str, HostFunction]] = []

    def table_of(src: FunctionSource) -> dict[str, Any]:
        if src.key not in tables:
            tables[src.key] = dict(src.constants())
            texts[src.key] = src.text
        return tables[src.key]

    todo: list[tuple[FunctionSource, set[str], set[str]]] = [(home, called_names(body), read_names(body))]
    while todo and len(made) < MAX_HOST_FUNCTIONS:
        src, names, reads = todo.pop(0)
        table = table_of(src)
        for name in sorted(reads - names):
            if name not in table:
                known, value = src.constant(name)
                if known:
                    table[name] = value
        for name in sorted(names):
            if name in table and isinstance(table[name], HostFunction):
                continue
            found = src.find(name)
            if found is None:
                continue
            node, owner, origin = found
            fn = made.get(origin)
            if fn is None:
                fn = HostFunction(node, table_of(owner), origin)
                made[origin] = fn
                order.append((owner.key, fn))
                todo.append((owner, called_names(node.body), read_names(node.body)))
            table[name] = fn
            if len(made) >= MAX_HOST_FUNCTIONS:
                break
    return LaunchFunctions(table_of(home), texts, order)
