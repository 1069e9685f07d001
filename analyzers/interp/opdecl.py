"""How an op module declares the `tl.*` ops it models: one `Op` per name.

An op module ends with `OPS = declare("family", {name: compute, ...})`; ops.py gathers every
family into one registry (a name declared twice is an error at import), dispatches calls through
it, and derives the name lists other stages need (the scan's memory calls, the quick fixes'
maskable ops) from the flags declared here. Adding an op touches its family's module only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# compute(interpreter, positional args, keyword args, the call node) -> the result value
Compute = Callable[[Any, list[Any], dict[str, Any], ast.AST], Any]


@dataclass(frozen=True)
class Op:
    name: str
    family: str
    compute: Compute
    # its first argument is an address built from pointer parameters (`tl.load(ptr + offs)`):
    # the scan reads the ranks of the tensors behind it from that expression
    takes_pointer: bool = False
    # a quick fix may add a missing `mask=` copied from the kernel's other memory ops
    mask_fix: bool = False
    # also a tensor method: `x.name(*args)` computes `name(x, *args)`
    method: bool = False


def declare(family: str, table: dict[str, Compute], **flags: bool) -> list[Op]:
    """One `Op` per entry of `table`, all of `family`, all with the same `flags`."""
    return [Op(name, family, compute, **flags) for name, compute in table.items()]


def named(compute: Callable[..., Any], name: str) -> Compute:
    """A compute for a function shared by several ops that takes the op's name first."""

    def call(interp: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return compute(interp, name, args, kwargs, node)

    return call
