"""Launcher inputs the user's call decides, which the probes pick like the shapes of tensors.

A public function's scalar and list arguments are not sizes the binder can choose freely:
- an axis argument (`dim`, `dims`, `axis`, `axes`): `for d in dim: N *= shape[d]` needs a list
  of real axes, `dim % x.ndim` an int. The probe picks the last axis (`-1`, or `[-1]` where the
  launcher uses it as a sequence) and the second probe the first (`0`, `[0]`);
- `normalized_shape` (layer and RMS norms): the trailing extents of the first tensor argument,
  as torch requires of it: the last one, and the last two in the second probe;
- a sequence the launcher unpacks (`OH, OW = output_size`): that many sizes, which the
  probes choose as they choose a tensor's extents (the code fixes the length, nothing else);
- a shape list (`size`, `shape`, `sizes`) the launcher allocates from (`torch.empty(size)`),
  so the tensors agree with it by construction: one extent, two in the second probe.
Each pick is a value the launcher itself could receive, everything else is computed from it
exactly, and it is named in the probe's choices, so a finding only one of the two probes sees
is at most a hint (binder_picks.py, judge.py). A launch under `if dim is None:` keeps `None`.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host_values import HostTensor, SymInt, dotted_name
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import subtree

AXIS_PARAMS = frozenset({"dim", "dims", "axis", "axes"})
SHAPE_PARAMS = frozenset({"size", "shape", "sizes"})
NORMALIZED_SHAPE = "normalized_shape"
_FACTORIES = frozenset(
    {"empty", "zeros", "ones", "full", "rand", "randn", "new_empty", "new_zeros", "new_ones"}
)
_SEQUENCE_BUILTINS = frozenset({"len", "list", "tuple", "sorted", "set", "enumerate", "reversed"})


class LauncherInputs(BinderState):
    """The picks of a launcher's public inputs (see the module's docstring)."""

    def input_pick(self, ev: Any, name: str, default: ast.expr | None) -> Any:
        """The value the probe gives the launcher parameter `name` (no default, or `None`), or
        None where it is not such an input; the pick is named in `input_choices`."""
        func = self.site.host_func if self.site is not None else None
        if func is None or (default is not None and not _is_none(default)):
            return None
        when_none, unpacked, sequence = _launcher_reads(func, self.site.call, name)  # type: ignore[union-attr]
        if when_none:
            return None
        if unpacked and default is None:
            # `OH, OW = output_size`: a sequence of that many sizes, each one the probes choose
            return tuple(ev.dim(f"{name}.{i}") for i in range(unpacked))
        second = self.second_probe
        if name in AXIS_PARAMS:
            axis = 0 if second else -1
            value: Any = [axis] if sequence else axis
            self.input_choices[name] = f"`{name}` (the caller's axis) = {value!r}"
            return value
        if name == NORMALIZED_SHAPE:
            t = next((v for v in ev.env.values() if isinstance(v, HostTensor)), None)
            if t is None:
                return None
            last = 2 if second and len(t.shape) >= 2 else 1
            dims = _shape_of(t)[-last:]
            self.input_choices[name] = f"`{name}` (the caller's) = the last {last} extent(s) of `{t.name}`"
            return tuple(dims)
        if (table := _keyed_table(func, name, ev.env)) is not None:
            keys = list(table[1])
            key = keys[-1] if second else keys[0]
            self.input_choices[name] = f"`{name}` (the caller's key of `{table[0]}`) = {key!r}"
            return key
        if name in SHAPE_PARAMS and _allocates_from(func, name):
            rank = 2 if second else 1
            self.input_choices[name] = f"`{name}` (the caller's shape) = {rank} extent(s)"
            return tuple(ev.dim(f"{name}.{i}") for i in range(rank))
        return None


def _launcher_reads(func: ast.FunctionDef, call: ast.AST, name: str) -> tuple[bool, int, bool]:
    """(`_launched_when_none`, `_unpacked_length`, `_used_as_sequence`) of `name`: questions about
    the launcher's tree alone, asked again by every probe and config, so answered once per
    launch call and name (kept on the function node, which lives as long as its tree)."""
    memo = func.__dict__.setdefault("_argus_input_reads", {})
    key = (call, name)
    if key not in memo:
        # (the last two read the function alone: once per name for all its launches, node_memo.py)
        memo[key] = (
            _launched_when_none(func, call, name),
            *on_node(func, ("input_reads", name), lambda: (_unpacked_length(func, name), _used_as_sequence(func, name))),
        )
    return memo[key]


def _shape_of(t: HostTensor) -> list[Any]:
    return [SymInt(s, y) for s, y in zip(t.shape, t.symbols, strict=True)]


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def _used_as_sequence(func: ast.FunctionDef, name: str) -> bool:
    """Whether the launcher iterates `name`, takes its length or items, spreads it, or
    allocates or views a tensor of that shape (`torch.empty(size)`, `x.view(shape)`)."""
    for n in subtree(func):
        if isinstance(n, ast.For) and _is_name(n.iter, name):
            return True
        if isinstance(n, ast.comprehension) and _is_name(n.iter, name):
            return True
        if isinstance(n, ast.Subscript) and _is_name(n.value, name):
            return True
        if isinstance(n, ast.Starred) and _is_name(n.value, name):
            return True
        if (
            isinstance(n, ast.Compare)
            and any(isinstance(op, ast.In | ast.NotIn) for op in n.ops)
            and any(_is_name(c, name) for c in n.comparators)
        ):
            return True
        if isinstance(n, ast.Call) and n.args and _is_name(n.args[0], name):
            callee = dotted_name(n.func)
            last = callee.rpartition(".")[2] if callee else getattr(n.func, "attr", "")
            if callee in _SEQUENCE_BUILTINS or last in _FACTORIES or last in ("view", "reshape", "expand"):
                return True
    return False


def _allocates_from(func: ast.FunctionDef, name: str) -> bool:
    """Whether the launcher allocates a tensor of shape `name` (`torch.empty(size)`): the
    tensors are then consistent with the pick by construction."""
    for n in subtree(func):
        if isinstance(n, ast.Call) and n.args and _is_name(n.args[0], name):
            callee = dotted_name(n.func)
            last = callee.rpartition(".")[2] if callee else getattr(n.func, "attr", "")
            if last in _FACTORIES:
                return True
    return False


def _unpacked_length(func: ast.FunctionDef, name: str) -> int:
    """`OH, OW = output_size`: how many names the launcher unpacks `name` into (0: none, or
    unpacks of different lengths)."""
    lengths = {
        len(t.elts)
        for n in subtree(func)
        if isinstance(n, ast.Assign) and (_is_name(n.value, name) or _maps_over(n.value, name))
        for t in n.targets
        if isinstance(t, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in t.elts)
    }
    lengths |= _stated_lengths(func, name)
    return lengths.pop() if len(lengths) == 1 else 0


def _stated_lengths(func: ast.FunctionDef, name: str) -> set[int]:
    """`if ... or len(padding) != 2: raise` / `assert len(padding) == 2`: the one length the
    launcher accepts for `name`."""
    out: set[int] = set()
    for n in subtree(func):
        if isinstance(n, ast.If) and n.body and isinstance(n.body[-1], ast.Raise) and not n.orelse:
            parts, op = _split(n.test, ast.Or), ast.NotEq
        elif isinstance(n, ast.Assert):
            parts, op = _split(n.test, ast.And), ast.Eq
        else:
            continue
        for t in parts:
            if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], op)):
                continue
            left, right = t.left, t.comparators[0]
            if (
                isinstance(left, ast.Call)
                and isinstance(left.func, ast.Name)
                and left.func.id == "len"
                and len(left.args) == 1
                and _is_name(left.args[0], name)
                and isinstance(right, ast.Constant)
                and type(right.value) is int
                and 0 < right.value <= 8
            ):
                out.add(right.value)
    return out


def _split(test: ast.expr, op: type[ast.boolop]) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, op):
        return [x for v in test.values for x in _split(v, op)]
    return [test]


def _maps_over(e: ast.expr, name: str) -> bool:
    """`[int(p) for p in padding]`: one item per item of `name` (flag-gems' pads unpack
    `pad_left, pad_right = [int(p) for p in padding]`, the same length as `padding`)."""
    return (
        isinstance(e, ast.ListComp | ast.GeneratorExp)
        and len(e.generators) == 1
        and not e.generators[0].ifs
        and _is_name(e.generators[0].iter, name)
    )


def _keyed_table(func: ast.FunctionDef, name: str, env: dict[str, Any]) -> tuple[str, dict] | None:
    """`mode = _str_to_reduction_mode[reduction]` (liger's losses): the module-level table that
    the launcher looks `name` up in, when every entry is a plain key and value; the caller
    passes one of its keys (any other raises a KeyError before the launch), so each key is a
    value the launcher can receive. None where `name` is not used so."""
    for looked_up in on_node(func, "keyed_tables", lambda: _keyed_lookups(func)).get(name, []):
        table = env.get(looked_up)
        if isinstance(table, dict) and table and all(_plain(k) and _plain(v) for k, v in table.items()):
            return looked_up, table
    return None


def _keyed_lookups(func: ast.FunctionDef) -> dict[str, list[str]]:
    """`T[name]` of a bare `T` and `name` in the launcher: name -> the Ts, in node order (asked
    for every input of every probe: indexed once per launcher tree, node_memo.py)."""
    out: dict[str, list[str]] = {}
    for n in subtree(func):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and isinstance(n.value, ast.Name):
            out.setdefault(n.slice.id, []).append(n.value.id)
    return out


def _plain(v: Any) -> bool:
    return isinstance(v, int | float | str) and not isinstance(v, SymInt)


def _is_name(e: ast.expr, name: str) -> bool:
    return isinstance(e, ast.Name) and e.id == name


def _launched_when_none(func: ast.FunctionDef, call: ast.AST, name: str) -> bool:
    """Whether the launch sits where `name` is None: in the body of `if name is None:` (or
    `if not name:`), or in the `else` of `if name is not None:` (or `if name:`)."""
    for n in subtree(func):
        if not isinstance(n, ast.If):
            continue
        in_body = any(call is m for s in n.body for m in subtree(s))
        in_else = any(call is m for s in n.orelse for m in subtree(s))
        if not (in_body or in_else):
            continue
        none_side = _none_side(n.test, name)
        if none_side == "body" and in_body or none_side == "else" and in_else:
            return True
    return False


def _none_side(test: ast.expr, name: str) -> str | None:
    """Which side of `if test:` runs when `name` is None ("body", "else"), if the test is
    only about that."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_name(test.left, name):
        right = test.comparators[0]
        if _is_none(right):
            return (
                "body"
                if isinstance(test.ops[0], ast.Is)
                else "else"
                if isinstance(test.ops[0], ast.IsNot)
                else None
            )
    if _is_name(test, name):
        return "else"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_name(test.operand, name):
        return "body"
    return None
