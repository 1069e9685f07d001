"""The rank a kernel's addresses imply for each pointer parameter: one dimension per stride
parameter multiplied in, plus one for a unit-stride term (`base + rows * stride_t + offs_d`: 2).
The launcher binder uses it for tensors whose shape the launcher never reads."""

from __future__ import annotations

import ast

from argus.analyzers.model.scan_index import MEMORY_CALLS, additive_names, call_name, names_of


def address_ranks(calls: list[ast.Call], proto: AddressTerms) -> dict[str, int]:
    """Pointer param -> the rank its addresses imply (the widest over its memory calls)."""
    ranks: dict[str, int] = {}
    for n in calls:
        if call_name(n) in MEMORY_CALLS and n.args:
            terms = AddressTerms(proto.values, proto.pointers, proto.runtime_ints, proto.shifts)
            terms.visit(n.args[0])
            if len(terms.bases) == 1:
                base = next(iter(terms.bases))
                ranks[base] = max(ranks.get(base, 0), len(terms.strides) + (1 if terms.unit else 0))
    return ranks


def pointer_shifts(augassigns: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """`x_ptr += row * stride_x`: the terms each name is moved by before addresses are formed."""
    shifts: dict[str, list[ast.expr]] = {}
    for n in augassigns:
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name):
            shifts.setdefault(n.target.id, []).append(n.value)
    return shifts


class AddressTerms:
    """The additive terms of an address: its base pointer param, the stride params its terms
    multiply by, and whether one term has no stride (the unit-stride innermost dimension).
    Variables are followed to their (last) assignment."""

    def __init__(
        self,
        values: dict[str, ast.expr],
        pointers: set[str],
        runtime_ints: set[str],
        shifts: dict[str, list[ast.expr]] | None = None,
    ) -> None:
        self.values, self.pointers, self.runtime_ints = values, pointers, runtime_ints
        self.shifts = shifts or {}
        self.bases: set[str] = set()
        self.strides: set[str] = set()
        self.unit = False
        self._seen: set[str] = set()

    def visit(self, e: ast.expr) -> None:
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            self.visit(e.left)
            self.visit(e.right)
        elif isinstance(e, ast.Name):
            if e.id in self.shifts and f"+{e.id}" not in self._seen:
                self._seen.add(f"+{e.id}")
                for shift in self.shifts[e.id]:
                    self._visit_shift(shift)
            if e.id in self.pointers:
                self.bases.add(e.id)
            elif e.id in self.values and e.id not in self._seen and self._pointer_like(e.id):
                self._seen.add(e.id)
                self.visit(self.values[e.id])
            else:
                self.unit = True
        elif isinstance(e, ast.Subscript):
            self.visit(e.value)
        elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "cast"):
            self.visit(e.func.value)
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
            found = names_of(e) & self.runtime_ints
            if found:
                self.strides |= found
            else:
                self.unit = True

    def _visit_shift(self, e: ast.expr) -> None:
        """A term a pointer was moved by: only its strided products count (a scalar offset
        such as `row * stride` adds a dimension; a bare offset says nothing of unit stride)."""
        unit = self.unit
        self.visit(e)
        self.unit = unit

    def _pointer_like(self, name: str, visiting: frozenset[str] = frozenset()) -> bool:
        """A variable that holds a pointer (`k_base = K + ...`), not an index."""
        names = additive_names(self.values[name])
        if names & self.pointers:
            return True
        visiting = visiting | {name}
        return any(n in self.values and n not in visiting and self._pointer_like(n, visiting) for n in names)
