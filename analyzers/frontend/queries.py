"""Finding Triton kernels in a module: `@triton.jit` functions, also under autotune/heuristics."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from analyzers.frontend.parse import text_of

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
