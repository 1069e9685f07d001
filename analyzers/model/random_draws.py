"""Which values a random draw carries on: none of its arguments' (issue 12, coverage).

Triton's generators are counter-based: `tl.philox(seed, c0, c1, c2, c3)`, `tl.rand(seed,
offs)`, `tl.randint(seed, offs)` give a draw of a documented type and range for any seed and
counter, and the interpreter draws it from the offsets' shape alone (interp/ops_random.py).
A helper that returns such draws (flag-gems' `uniform(seed, philox_offset, offs)`) is the
same for the arguments it only draws from. So where the kernel steers on a draw (a shuffle by
`argsort` of random bits in flag-gems' randperm), it steers on a value any run may take, not on
the seed or offset the launcher passes: data_params.py leaves a draw's drawn-from arguments out
of what decides addresses. The draw itself is unknown-but-ranged; nothing about the seed's
value is assumed.

scan.py's tiled sizes keep them: a draw compared with loaded data that then steers an address
(multinomial's binary search `tl.where(cdf < rv, mid + 1, lo)`) would rest its bounds on
contents the checker synthesizes, so that seed stays a stand-in whose bounds are not judged.
"""

from __future__ import annotations

import ast

from argus.analyzers.model.host_values import dotted_name
from argus.analyzers.model.nodes import assignment_parts

# triton.language's random-number functions, often imported under their own names (flag-gems'
# `uint_to_uniform_float = tl.uint_to_uniform_float`): values from values
TRITON_RANDOM = frozenset(
    {
        "philox",
        "philox_impl",
        "randint",
        "randint4x",
        "rand",
        "randn",
        "rand4x",
        "randn4x",
        "uint_to_uniform_float",
        "pair_uniform_to_normal",
    }
)
# every argument of Triton's own random functions is drawn from (the seed and the counters)
ALL_POSITIONS: frozenset[int] = frozenset({-1})
MAX_DEPTH = 4  # helpers calling helpers followed this deep


class Draws:
    """The draw positions of the random functions and helpers a kernel calls (memoized)."""

    def __init__(self, helpers: dict[str, ast.FunctionDef]) -> None:
        self.helpers = helpers
        self.memo: dict[str, frozenset[int]] = {}

    def drawn_from(self, name: str, depth: int = 0) -> frozenset[int] | None:
        """The argument positions of `name` that its returned values depend on only through
        random draws (ALL_POSITIONS for Triton's own random functions); None for a call that
        draws nothing."""
        if name in TRITON_RANDOM and name not in self.helpers:
            return ALL_POSITIONS
        func = self.helpers.get(name)
        if func is None or depth >= MAX_DEPTH or not _draws(func):
            return None
        if name not in self.memo:
            self.memo[name] = frozenset()  # recursion: no position is drawn from until known
            deps = self.dependencies([func], depth + 1)
            returned: set[str] = set()
            for n in ast.walk(func):
                if isinstance(n, ast.Return) and n.value is not None:
                    returned |= self.reads(n.value, depth + 1)
            reached = closure(returned, deps)
            params = [a.arg for a in func.args.args]
            self.memo[name] = frozenset(i for i, p in enumerate(params) if p not in reached)
        return self.memo[name]

    def dependencies(self, roots: list[ast.AST], depth: int = 0) -> dict[str, set[str]]:
        """Name -> the names its assignments in `roots` read (`a = b + c`, `a += d`, `for a in
        range(n)`), a random function's drawn-from arguments left out."""
        deps: dict[str, set[str]] = {}
        for root in roots:
            for node in ast.walk(root):
                parts = assignment_parts(node)
                if parts is None:
                    continue
                targets, value = parts
                read = self.reads(value, depth, shapes=True)
                if isinstance(node, ast.AugAssign):
                    read |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            deps.setdefault(n.id, set()).update(read)
        return deps

    def reads(self, expr: ast.AST, depth: int = 0, shapes: bool = False) -> set[str]:
        """The names whose values `expr` reads, a draw's drawn-from arguments left out; with
        `shapes` False also not those it only asks the type or shape of (`x.dtype ==
        tl.uint32` steers on the type, the same for every value)."""
        out: set[str] = set()
        todo: list[ast.AST] = [expr]
        while todo:
            n = todo.pop()
            if not shapes and isinstance(n, ast.Attribute) and n.attr in ("dtype", "shape", "type"):
                continue
            if isinstance(n, ast.Name):
                out.add(n.id)
            if isinstance(n, ast.Call) and (drawn := self._drawn_positions(n, depth)):
                todo.append(n.func)
                if drawn is not ALL_POSITIONS:  # a helper's keywords are read, to stay on the safe side
                    todo.extend(a for i, a in enumerate(n.args) if i not in drawn)
                    todo.extend(k.value for k in n.keywords)
                continue
            todo.extend(ast.iter_child_nodes(n))
        return out

    def _drawn_positions(self, call: ast.Call, depth: int) -> frozenset[int]:
        name = dotted_name(call.func)
        last = name.rpartition(".")[2] if name else ""
        return (self.drawn_from(last, depth) or frozenset()) if last else frozenset()


def closure(names: set[str], deps: dict[str, set[str]]) -> set[str]:
    """`names` and everything they are computed from."""
    out: set[str] = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(deps.get(n, ()))
    return out


def _draws(func: ast.FunctionDef) -> bool:
    """Whether the helper calls one of Triton's random functions."""
    for n in ast.walk(func):
        if isinstance(n, ast.Call):
            name = dotted_name(n.func)
            if name and name.rpartition(".")[2] in TRITON_RANDOM:
                return True
    return False
