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
    """(launched where `name` is None, how many names it is unpacked into, used as a
    sequence): questions about the launcher's tree alone, asked again by every probe and config
    for every parameter, so each is answered for all names in one pass, once per launcher tree
    (and the first once per launch call), kept on the nodes (node_memo.py)."""
    none_at = on_node(call, "launched_when_none", lambda: _launched_when_none(func, call), func)
    unpacked, sequences = on_node(func, "input_reads", lambda: (_unpacked_lengths(func), _sequence_names(func)))
    return name in none_at, unpacked.get(name, 0), name in sequences


def _shape_of(t: HostTensor) -> list[Any]:
    return [SymInt(s, y) for s, y in zip(t.shape, t.symbols, strict=True)]


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def _sequence_names(func: ast.FunctionDef) -> frozenset[str]:
    """The names the launcher iterates, takes the length or items of, spreads, or allocates or
    views a tensor of that shape with (`torch.empty(size)`, `x.view(shape)`)."""
    out: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.For | ast.comprehension):
            out.update(_name_id(n.iter))
        elif isinstance(n, ast.Subscript | ast.Starred):
            out.update(_name_id(n.value))
        elif isinstance(n, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in n.ops):
            out.update(i for c in n.comparators for i in _name_id(c))
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name):
            callee = dotted_name(n.func)
            last = callee.rpartition(".")[2] if callee else getattr(n.func, "attr", "")
            if callee in _SEQUENCE_BUILTINS or last in _FACTORIES or last in ("view", "reshape", "expand"):
                out.add(n.args[0].id)
    return frozenset(out)


def _name_id(e: ast.expr) -> tuple[str, ...]:
    return (e.id,) if isinstance(e, ast.Name) else ()


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


def _unpacked_lengths(func: ast.FunctionDef) -> dict[str, int]:
    """`OH, OW = output_size`: name -> how many names the launcher unpacks it into (a name
    unpacked to different lengths, or stated two, is left out)."""
    lengths: dict[str, set[int]] = {}
    for n in subtree(func):
        if not isinstance(n, ast.Assign):
            continue
        source = _name_id(n.value) or _mapped_name(n.value)
        for t in n.targets if source else ():
            if isinstance(t, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in t.elts):
                lengths.setdefault(source[0], set()).add(len(t.elts))
    for name, stated in _stated_lengths(func).items():
        lengths.setdefault(name, set()).update(stated)
    return {name: next(iter(of)) for name, of in lengths.items() if len(of) == 1}


def _stated_lengths(func: ast.FunctionDef) -> dict[str, set[int]]:
    """`if ... or len(padding) != 2: raise` / `assert len(padding) == 2`: name -> the lengths
    the launcher accepts for it."""
    out: dict[str, set[int]] = {}
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
                and isinstance(left.args[0], ast.Name)
                and isinstance(right, ast.Constant)
                and type(right.value) is int
                and 0 < right.value <= 8
            ):
                out.setdefault(left.args[0].id, set()).add(right.value)
    return out


def _split(test: ast.expr, op: type[ast.boolop]) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, op):
        return [x for v in test.values for x in _split(v, op)]
    return [test]


def _mapped_name(e: ast.expr) -> tuple[str, ...]:
    """`[int(p) for p in padding]`: ("padding",), one item per item of it (flag-gems' pads unpack
    `pad_left, pad_right = [int(p) for p in padding]`, the same length as `padding`)."""
    if isinstance(e, ast.ListComp | ast.GeneratorExp) and len(e.generators) == 1 and not e.generators[0].ifs:
        return _name_id(e.generators[0].iter)
    return ()


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


def _launched_when_none(func: ast.FunctionDef, call: ast.AST) -> frozenset[str]:
    """The names the launch sits where they are None: in the body of `if name is None:` (or
    `if not name:`), or in the `else` of `if name is not None:` (or `if name:`)."""
    out: set[str] = set()
    for n in subtree(func):
        if not isinstance(n, ast.If):
            continue
        side = _none_side(n.test)
        if side is None:
            continue
        block = n.body if side[0] == "body" else n.orelse
        if any(call is m for s in block for m in subtree(s)):
            out.add(side[1])
    return frozenset(out)


def _none_side(test: ast.expr) -> tuple[str, str] | None:
    """(which side of `if test:` runs when the name is None, "body" or "else"; the name), if the
    test is only about one name."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
        if _is_none(test.comparators[0]):
            op = test.ops[0]
            side = "body" if isinstance(op, ast.Is) else "else" if isinstance(op, ast.IsNot) else None
            return None if side is None else (side, test.left.id)
    if isinstance(test, ast.Name):
        return "else", test.id
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return "body", test.operand.id
    return None
