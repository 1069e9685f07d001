"""What indexes each axis of each pointer parameter: for every stride parameter an address
multiplies in (`off_h * stride_kh`), and for its unit-stride term (`+ offs_d`), the index
variables of that term and the bounds the kernel compares them with (`offs_n < N_CTX`).

The launch binder reads it to relate an axis the launcher never names to another tensor's: two
axes walked by the same index (`off_h` for q and k), or by indices the kernel bounds by the same
size (`offs_m < N_CTX`, `offs_n < N_CTX`), hold the same extent by the kernel's own code. Axes
with nothing in common stay apart (issue 12, rule 1: no relation the code does not state)."""

from __future__ import annotations

import ast

from argus.analyzers.model.scan_index import MEMORY_CALLS, call_name, names_of

UNIT = ""  # the key of the unit-stride term (an address term with no stride parameter)
_MAX_DEPTH = 12  # assignment chains followed per name (bounded cost on odd code)


def axis_index_keys(
    assigns: list[ast.Assign],
    calls: list[ast.Call],
    compares: list[ast.Compare],
    fors: list[ast.For],
    pointers: set[str],
    runtime_ints: set[str],
) -> dict[str, dict[str, frozenset[str]]]:
    """Pointer param -> {stride param, or UNIT -> the keys of the terms it multiplies}."""
    values: dict[str, ast.expr] = {}
    for n in assigns:
        if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            values.setdefault(n.targets[0].id, n.value)
    bound = {t.id for n in fors for t in ast.walk(n.target) if isinstance(t, ast.Name)} | set(values)
    reader = _AxisReader(values, pointers, runtime_ints, bound, _bounds(compares))
    for n in calls:
        name = call_name(n)
        if name in MEMORY_CALLS and n.args:
            reader.address(n.args[0])
        elif name == "make_block_ptr":
            reader.block_ptr(n)
    return {p: {k: frozenset(v) for k, v in axes.items()} for p, axes in reader.out.items()}


def _strip(e: ast.expr) -> ast.expr:
    """`offs[:, None]`, `x.to(tl.int64)`, `tl.multiple_of(x, 16)` index the same as `x`."""
    while True:
        if isinstance(e, ast.Subscript):
            e = e.value
        elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "cast"):
            e = e.func.value
        elif isinstance(e, ast.Call) and call_name(e) in ("multiple_of", "max_contiguous") and e.args:
            e = e.args[0]
        else:
            return e


def _bounds(compares: list[ast.Compare]) -> dict[str, set[str]]:
    """Index variable -> the sizes the kernel compares it below (`offs_n < N_CTX`)."""
    out: dict[str, set[str]] = {}
    for c in compares:
        if len(c.ops) != 1:
            continue
        left, op, right = _strip(c.left), c.ops[0], _strip(c.comparators[0])
        if isinstance(op, ast.Gt | ast.GtE):
            left, right = right, left
        elif not isinstance(op, ast.Lt | ast.LtE):
            continue
        if isinstance(left, ast.Name):
            out.setdefault(left.id, set()).add(ast.unparse(right))
    return out


class _AxisReader:
    """Walks addresses and block pointers, recording the keys of each strided term."""

    def __init__(
        self,
        values: dict[str, ast.expr],
        pointers: set[str],
        runtime_ints: set[str],
        bound: set[str],
        bounds: dict[str, set[str]],
    ) -> None:
        self.values, self.pointers, self.runtime_ints = values, pointers, runtime_ints
        self.bound, self.bounds = bound, bounds
        self.out: dict[str, dict[str, set[str]]] = {}

    def address(self, e: ast.expr) -> None:
        terms: list[ast.expr] = []
        bases: set[str] = set()
        self._terms(e, terms, bases, 0)
        if len(bases) != 1:
            return
        axes = self.out.setdefault(next(iter(bases)), {})
        for t in terms:
            stride, index = self._split(t)
            if stride is not None or index is not None:
                axes.setdefault(stride or UNIT, set()).update(self._keys(index) if index is not None else ())

    def block_ptr(self, n: ast.Call) -> None:
        """`make_block_ptr(base, shape, strides, offsets, ...)`: axis i of the block has extent
        `shape[i]` by the kernel's own statement, and is walked from `offsets[i]`."""
        names = ("base", "shape", "strides", "offsets")
        a = dict(zip(names, n.args, strict=False)) | {k.arg: k.value for k in n.keywords if k.arg}
        base, shape, strides, offsets = (a.get(k) for k in names)
        if not all(isinstance(x, ast.Tuple | ast.List) for x in (shape, strides)) or base is None:
            return
        terms: list[ast.expr] = []
        bases: set[str] = set()
        self._terms(base, terms, bases, 0)
        if len(bases) != 1:
            return
        axes = self.out.setdefault(next(iter(bases)), {})
        for t in terms:
            stride, index = self._split(t)
            if stride is not None and index is not None:
                axes.setdefault(stride, set()).update(self._keys(index))
        offs = offsets.elts if isinstance(offsets, ast.Tuple | ast.List) else []
        for i, (size, s) in enumerate(zip(shape.elts, strides.elts, strict=False)):  # type: ignore[union-attr]
            s = _strip(s)
            if not (isinstance(s, ast.Name) and s.id in self.runtime_ints):
                continue
            keys = axes.setdefault(s.id, set())
            keys.add("<" + ast.unparse(size))
            if i < len(offs):
                keys.update(self._keys(offs[i]))

    def _terms(self, e: ast.expr, out: list[ast.expr], bases: set[str], depth: int) -> None:
        """The additive terms of an address, pointer variables and offset sums followed."""
        e = _strip(e)
        if depth > _MAX_DEPTH:
            return
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            self._terms(e.left, out, bases, depth + 1)
            self._terms(e.right, out, bases, depth + 1)
        elif isinstance(e, ast.Name) and e.id in self.pointers:
            bases.add(e.id)
        elif isinstance(e, ast.Name) and e.id in self.values and self._sum_of_strides(self.values[e.id]):
            self._terms(self.values[e.id], out, bases, depth + 1)  # `k_base = K + off_h * stride_kh`
        else:
            out.append(e)

    def _sum_of_strides(self, e: ast.expr) -> bool:
        """A variable that holds a pointer or a sum of strided offsets (`q_offset`), not an index."""
        names = names_of(e)
        return bool(names & self.pointers) or (
            isinstance(_strip(e), ast.BinOp) and bool(names & self.runtime_ints) and "stride" in ast.unparse(e)
        )

    def _split(self, t: ast.expr) -> tuple[str | None, ast.expr | None]:
        """(stride param, index) of a term `index * stride`; (None, t) for a unit term."""
        t = _strip(t)
        if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult):
            for s, other in ((t.right, t.left), (t.left, t.right)):
                s = _strip(s)
                if isinstance(s, ast.Name) and s.id in self.runtime_ints:
                    return s.id, other
            return None, None  # a product with a constant or a constexpr: not an axis we can name
        if isinstance(t, ast.Constant):
            return None, None
        return None, t

    def _keys(self, e: ast.expr) -> frozenset[str]:
        """The index variables under `e`, followed through their assignments, and the sizes the
        kernel bounds them by."""
        out: set[str] = set()
        todo = [n for n in names_of(e) if n in self.bound]
        seen: set[str] = set()
        while todo and len(seen) < 64:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            out.add("=" + n)
            out.update("<" + b for b in self.bounds.get(n, ()))
            v = self.values.get(n)
            if v is not None and not isinstance(_strip(v), ast.Call):
                todo.extend(m for m in names_of(v) if m in self.bound)
        return frozenset(out)
