"""Finding Triton kernels in a module: `@triton.jit` functions, also under autotune/heuristics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from argus.analyzers.frontend.parse import PY_LANGUAGE, text_of
from argus.analyzers.frontend.text_memo import by_text
from tree_sitter import Node, Query, QueryCursor

T = TypeVar("T")

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


def called_names(node: Node) -> frozenset[str]:
    """Identifiers called or passed as arguments anywhere under `node` (one C-level query, once
    per text of the node: text_memo.py)."""
    return by_text("called_names", node, lambda: _called_names(node))


def _called_names(node: Node) -> frozenset[str]:
    caps = QueryCursor(CALLS).captures(node)
    return frozenset(text_of(n) for key in ("fn", "arg") for n in caps.get(key, []))


def launch_calls(root: Node) -> list[tuple[str, Node]]:
    """(kernel name, call node) for every `name[grid](...)` under `root` (a module's, found
    per top-level statement: `_by_statement`)."""
    found = _by_statement(root, "launch_calls", _launch_calls)
    return found if found is not None else _launch_calls(root)


def _launch_calls(root: Node) -> list[tuple[str, Node]]:
    caps = QueryCursor(LAUNCHES).captures(root)
    kernels = caps.get("kernel", [])
    calls = caps.get("launch", [])
    by_start = {n.start_byte: n for n in calls}
    out = []
    for k in kernels:
        call = by_start.get(k.start_byte)
        if call is not None:
            out.append((text_of(k).split(".")[-1], call))
    # in the file's order: a query's captures need not come in it (flag-gems' experimental
    # diag.py listed `diag_out`'s launch before `diag`'s in some processes and not in others,
    # and the first launch is the one a kernel is bound from)
    out.sort(key=lambda pair: pair[1].start_byte)
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


# `fn = kernel[grid]`, `merge_fn = kernel`, `k = a if c else b`, `table = {"x": kernel}`:
# names a launcher binds to a kernel before it calls them (model/kernel_aliases.py)
ALIASES = Query(PY_LANGUAGE, "(assignment left: (identifier) @alias right: (_) @value)")


def alias_assignments(root: Node) -> list[tuple[str, list[str], Node]]:
    """(bound name, the names its value may stand for, the assignment) for every `name = ...`
    under `root` whose value is a name, a subscripted name, a conditional of names or a dict
    of them. Which of those names are kernels is the caller's business."""
    found = _by_statement(root, "alias_assignments", _alias_assignments)
    pairs = found if found is not None else _alias_assignments(root)
    return [(alias, list(names), node) for (alias, names), node in pairs]


def _alias_assignments(root: Node) -> list[tuple[tuple[str, tuple[str, ...]], Node]]:
    out = []
    for _, caps in QueryCursor(ALIASES).matches(root):
        alias, value = caps["alias"][0], caps["value"][0]
        names = _named(value)
        if names and alias.parent is not None:
            out.append(((text_of(alias), tuple(names)), alias.parent))
    return out


def _by_statement(root: Node, kind: str, find: Callable[[Node], list[tuple[T, Node]]]) -> list[tuple[T, Node]] | None:
    """`find` over a module, one top-level statement at a time, each statement's answer kept
    by its text (frontend/text_memo.py) as (payload, place relative to the statement, node
    type) and its nodes found again in this tree by their place: the two whole-module queries
    of every check cost 5 ms of a keystroke that re-analyzed nothing, and an edit changes one
    statement. None (the caller queries the whole module) for another node than a module, a
    tree with an error (a statement's subtree may then depend on what is before it), or a
    node not found again."""
    if root.type != "module" or root.has_error:
        return None
    out: list[tuple[T, Node]] = []
    for child in root.children:
        base = child.start_byte
        held = by_text(kind, child, lambda child=child: _relative(find(child), child.start_byte))
        for payload, start, end, node_type in held:
            node = _node_at(child, base + start, base + end, node_type)
            if node is None:
                return None
            out.append((payload, node))
    return out


def _relative(found: list[tuple[T, Node]], base: int) -> tuple[tuple[T, int, int, str], ...]:
    return tuple((payload, n.start_byte - base, n.end_byte - base, n.type) for payload, n in found)


def _node_at(within: Node, start: int, end: int, node_type: str) -> Node | None:
    """The node of `node_type` spanning exactly `start`-`end` under `within` (the smallest
    spanning node, or one around it with the same span)."""
    node = within.descendant_for_byte_range(start, end)
    while node is not None and node.start_byte == start and node.end_byte == end:
        if node.type == node_type:
            return node
        node = node.parent
    return None


def _named(value: Node) -> list[str]:
    while value.type == "parenthesized_expression" and value.named_children:
        value = value.named_children[0]
    if value.type in ("identifier", "attribute"):
        return [text_of(value).split(".")[-1]]
    if value.type == "subscript":
        inner = value.child_by_field_name("value")
        return [text_of(inner).split(".")[-1]] if inner is not None and inner.type in ("identifier", "attribute") else []
    if value.type == "conditional_expression":
        return [n for c in value.named_children[:1] + value.named_children[2:3] for n in _named(c) if c.type != "subscript"]
    if value.type == "dictionary":
        pairs = [c.child_by_field_name("value") for c in value.named_children if c.type == "pair"]
        return [n for p in pairs if p is not None and p.type in ("identifier", "attribute") for n in _named(p)]
    return []


def alias_owners(assignments: list[tuple[str, list[str], Node]], kernel: str, launched: set[str]) -> list[Node]:
    """The function definitions that bind a local name to `kernel` and launch it through that
    name (`launched`: the names called with a subscript, `name[grid](...)`, in the module)."""
    out: list[Node] = []
    for alias, names, node in assignments:
        if kernel not in names:
            continue
        owner = node
        while owner.parent is not None and owner.type != "function_definition":
            owner = owner.parent
        if owner.type != "function_definition" or owner in out:
            continue
        value = node.child_by_field_name("right")
        called = value is not None and value.type == "subscript"  # `fn = kernel[grid]`: `fn(...)`
        if called or alias in launched or any(n.startswith(f"{alias}[") for n in launched):
            out.append(owner)
    return out
