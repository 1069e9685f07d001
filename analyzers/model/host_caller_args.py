"""Launchers that take `*args, **kwargs` and read their inputs out of them.

flag-gems' ATen overrides are written `def neg_(*args, **kwargs): x = args[0] ...` (or
`x = kwargs["input"]`, `x = args[0] if len(args) > 0 else kwargs.get("input")`). The tensor
the kernel receives is then a launcher input like a named parameter, only reached through
the caller's argument tuple. Left unbound, `args[0]` is unknown and so is every value computed
from it (`x.numel()`, `x.shape[-1]`, `triton.cdiv(n, BLOCK)`, `int(...)` of them).

The probe makes one call the launcher accepts: it passes by position every position the
launcher reads (`args[k]`), and, when the launcher reads no position, by keyword every key it
reads (`kwargs["input"]`, `kwargs.get("input")`). Keys a positional launcher reads are left
out: they are its options (`kwargs.get("out")`), and the call omits them, so `out` is `None`
there, as in the call `neg_(x)`. Each input is made as the parameter of the local name it is
read into would be (a tensor where the launcher uses that name as one, with the rank its uses
give; a size otherwise), and it is one object wherever it is read, so `x.numel()` measures the
tensor the kernel's `x_ptr` addresses.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.nodes import subtree


@dataclass
class CallerReads:
    """What a `*args, **kwargs` launcher reads of its caller's arguments."""

    vararg: str | None
    kwarg: str | None
    # local name -> the position (int) or key (str) it is read from, first read first
    names: dict[str, int | str] = field(default_factory=dict)
    positions: set[int] = field(default_factory=set)
    keys: list[str] = field(default_factory=list)

    def call_positions(self) -> int:
        """How many positional arguments the probe's call passes."""
        return max(self.positions) + 1 if self.positions else 0

    def call_keys(self) -> list[str]:
        """The keyword arguments the probe's call passes (only where no position is read)."""
        return [] if self.positions else list(self.keys)

    def slot_name(self, slot: int | str) -> str | None:
        """The first local name the launcher reads `slot` into (None: read only in place)."""
        return next((n for n, s in self.names.items() if s == slot), None)


def caller_reads(func: ast.FunctionDef) -> CallerReads | None:
    """The caller's arguments `func` reads through its `*args` / `**kwargs` (None when it has
    neither, or reads nothing through them)."""
    a = func.args
    reads = CallerReads(a.vararg.arg if a.vararg else None, a.kwarg.arg if a.kwarg else None)
    if reads.vararg is None and reads.kwarg is None:
        return None
    for n in subtree(func):
        if isinstance(n, ast.Subscript | ast.Call):
            slot = _slot(n, reads)
            if isinstance(slot, int):
                reads.positions.add(slot)
            elif isinstance(slot, str) and slot not in reads.keys:
                reads.keys.append(slot)
        if isinstance(n, ast.Assign):
            for t in n.targets:
                _name_reads(t, n.value, reads)
    if not reads.positions and not reads.keys:
        return None
    return reads


def _name_reads(target: ast.expr, value: ast.expr, reads: CallerReads) -> None:
    """`x = args[0]`, `x = kwargs["input"]`, `x = args[0] if len(args) else kwargs.get(...)`,
    `a, b = args[0], args[1]`: the local names and the slots they come from."""
    if isinstance(target, ast.Tuple | ast.List):
        if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
            for t, v in zip(target.elts, value.elts, strict=True):
                _name_reads(t, v, reads)
        return
    if not isinstance(target, ast.Name):
        return
    for alternative in _alternatives(value):
        slot = _slot(alternative, reads)
        if slot is not None:
            reads.names.setdefault(target.id, slot)
            return


def _alternatives(value: ast.expr) -> list[ast.expr]:
    """The expressions a value may come from: both arms of a conditional, a `.get`'s default."""
    if isinstance(value, ast.IfExp):
        return [*_alternatives(value.body), *_alternatives(value.orelse)]
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return [x for v in value.values for x in _alternatives(v)]
    return [value]


def _slot(n: ast.AST, reads: CallerReads) -> int | str | None:
    """The position or key `args[k]` / `kwargs["key"]` / `kwargs.get("key", ...)` reads."""
    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Constant):
        key = n.slice.value
        if n.value.id == reads.vararg and type(key) is int and 0 <= key < 16:
            return key
        if n.value.id == reads.kwarg and isinstance(key, str):
            return key
    if (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "get"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == reads.kwarg
        and n.args
        and isinstance(n.args[0], ast.Constant)
        and isinstance(n.args[0].value, str)
    ):
        return n.args[0].value
    return None


def bind_caller_args(env: dict[str, Any], reads: CallerReads, make: Callable[[str], Any]) -> None:
    """Bind the launcher's `*args` and `**kwargs` to the probe's call. `make(name)` gives the
    value a launcher parameter called `name` would get (tensor or size); a position read only
    in place, never into a name, is unknown (`Opaque("args[1]")`)."""

    def value(slot: int | str) -> Any:
        name = reads.slot_name(slot)
        if name is None:
            return Opaque(f"{reads.vararg}[{slot}]" if isinstance(slot, int) else f"{reads.kwarg}[{slot!r}]")
        return make(name)

    if reads.vararg is not None:
        env[reads.vararg] = tuple(value(k) for k in range(reads.call_positions()))
    if reads.kwarg is not None:
        env[reads.kwarg] = {k: value(k) for k in reads.call_keys()}


def caller_input_names(func: ast.FunctionDef) -> set[str]:
    """Local names a launcher reads its caller's inputs into (launcher_reads ranks them as it
    ranks parameters)."""
    reads = caller_reads(func)
    return set(reads.names) if reads is not None else set()


def caller_input(binder: Any, ev: Any, name: str, ranks: dict[str, int], pointer_args: set[str]) -> Any:
    """The value of the caller's input read into `name`, made as the launch binder makes a
    launcher parameter of that name: a tensor where the launcher uses `name` as one (or passes
    it to a pointer parameter), else the caller's pick (binder_inputs.py) or a probe size."""
    if name in ranks or name in pointer_args:
        return binder._param_tensor(ev, name, ranks)
    picked = binder.input_pick(ev, name, None)
    return picked if picked is not None else ev.dim(name)


def mapping_get(held: dict[Any, Any], args: list[Any]) -> Any:
    """`m.get(key, default)` as Python gives it; unknown where the key or any key held is."""
    key, default = args[0], (args[1] if len(args) == 2 else None)
    if isinstance(key, Opaque) or any(isinstance(k, Opaque) for k in held):
        return Opaque("get")
    try:
        return held.get(key, default)
    except TypeError:  # an unhashable key
        return Opaque("get")
