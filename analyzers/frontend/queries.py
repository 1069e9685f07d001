"""Finding Triton kernels in a module: `@triton.jit` functions, also under autotune/heuristics."""

from __future__ import annotations

from dataclasses import dataclass

from argus.analyzers.frontend.parse import PY_LANGUAGE, text_of
from tree_sitter import Node, Query, QueryCursor

# names a function calls or passes as an argument, positional or by keyword (helpers, combine
# functions: `tl.reduce(x, 0, combine_fn=reduce_all)`) and launches
CALLS = Query(
    PY_LANGUAGE,
    "(call function: (identifier) @fn) (call arguments: (argument_list (identifier) @arg))"
    " (call arguments: (argument_list (keyword_argument value: (identifier) @arg)))"
    # either branch of a choice made at compile time: `combine_fn=(reduce_all if invert else reduce_any)`
    " (call arguments: (argument_list (conditional_expression (identifier) @arg)))"
    " (call arguments: (argument_list (parenthesized_expression (conditional_expression (identifier) @arg))))"
    " (call arguments: (argument_list (keyword_argument value: (conditional_expression (identifier) @arg))))"
    " (call arguments: (argument_list (keyword_argument value:"
    " (parenthesized_expression (conditional_expression (identifier) @arg)))))",
)
LAUNCHES = Query(PY_LANGUAGE, "(call function: (subscript value: (_) @kernel)) @launch")


def called_names(node: Node) -> set[str]:
    """Identifiers called or passed as arguments anywhere under `node` (one C-level query)."""
    caps = QueryCursor(CALLS).captures(node)
    return {text_of(n) for key in ("fn", "arg") for n in caps.get(key, [])}


def launch_calls(root: Node) -> list[tuple[str, Node]]:
    """(kernel name, call node) for every `name[grid](...)` under `root`."""
    caps = QueryCursor(LAUNCHES).captures(root)
    kernels = caps.get("kernel", [])
    calls = caps.get("launch", [])
    by_start = {n.start_byte: n for n in calls}
    out = []
    for k in kernels:
        call = by_start.get(k.start_byte)
        if call is not None:
            out.append((text_of(k).split(".")[-1], call))
    return out


JIT_NAMES = {"triton.jit", "jit", "tl.jit", "triton.language.jit"}
WRAPPER_NAMES = {"triton.autotune", "autotune", "triton.heuristics", "heuristics"}


@dataclass
class KernelSite:
    """A decorated `@triton.jit` function as it sits in the module."""

    name: str
    node: Node  # the decorated_definition (decorators included)
    function: Node  # the function_definition
    decorators: list[Node]


def decorator_name(dec: Node) -> str:
    """`@triton.jit`, `@triton.jit(...)`, `@triton.autotune(...)` -> the dotted callee name."""
    expr = dec.named_children[0] if dec.named_children else dec
    if expr.type == "call":
        expr = expr.child_by_field_name("function") or expr
    return text_of(expr)


def is_jit_decorator(dec: Node) -> bool:
    return decorator_name(dec) in JIT_NAMES


def find_kernels(root: Node) -> list[KernelSite]:
    """Every top-level (or class-level) function carrying a jit decorator, in source order."""
    out: list[KernelSite] = []
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if node.type == "decorated_definition":
            fn = node.child_by_field_name("definition")
            decs = [c for c in node.children if c.type == "decorator"]
            if fn is not None and fn.type == "function_definition" and any(is_jit_decorator(d) for d in decs):
                out.append(KernelSite(text_of(fn.child_by_field_name("name")), node, fn, decs))
                continue
        if node.type in ("decorated_definition", "class_definition", "block", "if_statement", "ERROR"):
            stack.extend(reversed(node.children))
    return out
