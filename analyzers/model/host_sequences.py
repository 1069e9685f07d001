"""In-place methods of a Python list the launcher builds (`out_shape.insert(dim, 1)`,
`shape.append(n)`, `strides.pop()`): flag-gems builds an output's shape this way.

Left unmodelled, the call was an unknown value and the list kept its old items: an output
allocated from `out_shape` then silently missed the axis `insert` added. The evaluator now
applies the method to a copy (the name is rebound, so the two sides of an undecided `if`
never share a mutation), and where an argument is unknown the list becomes unknown.
"""

from __future__ import annotations

from typing import Any

from argus.analyzers.model.host_values import Opaque

LIST_METHODS = frozenset({"append", "insert", "extend", "pop", "reverse", "clear"})


def list_method(held: list[Any], name: str, args: list[Any] | Opaque) -> tuple[Any, Any]:
    """(the list after `held.name(*args)`, the call's value); an unknown list where the
    arguments (or an index) are not known."""
    unknown = (Opaque(f"list.{name}"), Opaque(f"list.{name}"))
    if isinstance(args, Opaque) or any(isinstance(a, Opaque) for a in args):
        return unknown
    out = list(held)
    if name == "append" and len(args) == 1:
        out.append(args[0])
        return out, None
    if name == "extend" and len(args) == 1 and isinstance(args[0], tuple | list):
        out.extend(args[0])
        return out, None
    if name == "insert" and len(args) == 2 and _index(args[0]):
        out.insert(int(args[0]), args[1])
        return out, None
    if name == "pop" and len(args) <= 1 and out and (not args or _index(args[0])):
        i = int(args[0]) if args else -1
        if -len(out) <= i < len(out):
            value = out.pop(i)
            return out, value
    if name == "reverse" and not args:
        return out[::-1], None
    if name == "clear" and not args:
        return [], None
    return unknown


def _index(x: Any) -> bool:
    """A position the code states: a plain int (a size class is the probe's, never an index)."""
    return type(x) is int
