"""Compile-time functions a kernel calls: `@tl.constexpr` / `@triton.constexpr_function` helpers.

flag-gems' sorts pick a dtype per bit width with `get_int_t(num_bits, signed)` and its scans an
accumulator type with `get_scan_accum_type(dtype)`: plain Python functions under a
`@tl.constexpr` (or, in newer Triton, `@triton.constexpr_function`) decorator, which Triton runs
at compile time on the constexpr arguments. Their bodies are small (branches on a dtype's
predicates, `tl.core.get_int_dtype`, shifts of a bit width), all of which the tag interpreter
evaluates on constexpr values; so each is run like a jit helper, in its own source map. Nothing
of the user's is imported or executed. Only functions of the kernel's own module are collected,
and only those the kernel (or one of its helpers, or another such function) names.
"""

from __future__ import annotations

import ast

from argus.analyzers.errors import UNPARSABLE
from argus.analyzers.frontend.parse import first_error
from argus.analyzers.frontend.queries import called_names, decorator_name
from argus.analyzers.model.kernel import Helper, parse_snippet
from argus.analyzers.module_view import ModuleView
from tree_sitter import Node

# the decorators that make a plain function a compile-time one
COMPILE_TIME_DECORATORS = frozenset(
    {
        "tl.constexpr",
        "triton.language.constexpr",
        "tl.constexpr_function",
        "triton.constexpr_function",
        "triton.language.constexpr_function",
        "constexpr_function",
    }
)
MAX_COMPILE_TIME_FUNCTIONS = 32  # a module of more is no worse off without the rest



def compile_time_functions(view: ModuleView, roots: list[Node]) -> dict[str, Helper]:
    """The compile-time functions of the module that the functions `roots` call, directly or
    through each other, parsed as helpers (those that do not parse are left out)."""
    out: dict[str, Helper] = {}
    for name, node in compile_time_nodes(view, roots).items():
        helper = _parse(view, node)
        if helper is not None:
            out[name] = helper
    return out


def compile_time_nodes(view: ModuleView, roots: list[Node]) -> dict[str, Node]:
    """The decorated definitions of those functions, by name (the kernel cache keys on their
    text, as on a jit helper's)."""
    defined = _defined(view.tree.root_node)
    out: dict[str, Node] = {}
    if not defined:
        return out
    todo = [name for node in roots for name in called_names(node) if name in defined]
    while todo and len(out) < MAX_COMPILE_TIME_FUNCTIONS:
        name = todo.pop()
        if name in out:
            continue
        out[name] = defined[name]
        fn = defined[name].child_by_field_name("definition")
        if fn is not None:
            todo.extend(n for n in called_names(fn) if n in defined and n not in out)
    return out


def _defined(root: Node) -> dict[str, Node]:
    """Module-level decorated definitions whose decorator is a compile-time one, by name."""
    out: dict[str, Node] = {}
    for child in root.children:
        if child.type != "decorated_definition":
            continue
        decorators = [c for c in child.children if c.type == "decorator"]
        if not any(decorator_name(d) in COMPILE_TIME_DECORATORS for d in decorators):
            continue
        fn = child.child_by_field_name("definition")
        name = fn.child_by_field_name("name") if fn is not None else None
        if fn is not None and fn.type == "function_definition" and name is not None and name.text:
            out[name.text.decode("utf-8", "replace")] = child
    return out


def _parse(view: ModuleView, node: Node) -> Helper | None:
    if first_error(node) is not None:
        return None
    try:
        mod, smap = parse_snippet(
            view.source, node.start_byte, node.end_byte, view.starts, node.start_point[0]
        )
    except UNPARSABLE:
        return None
    fn = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
    return None if fn is None else Helper(fn, smap)
