"""Concrete sizes for each dimension class under one probe kind. Sizes are adversarial around
tile edges: ragged (2B+r), exact multiples (2B), half tiles (1.5B) and 1; batch-like dimensions
get small distinct primes, so `pid // H` with a grid of Z programs cannot pass by accident."""

from __future__ import annotations

import ast
import operator
import re

from argus.analyzers.model.binder_state import BinderState

PRIMES = [2, 3, 5, 7, 11, 13]


class SizeChoice(BinderState):
    """Chooses the size of every dimension class for a probe kind."""

    def choose_sizes(self, kind: str) -> dict[str, int]:
        roots = sorted({self.dims.find(s) for s in self.dims.parent if not s.startswith("(")})
        sizes: dict[str, int] = {}
        prime_i = 0
        tiled_i = 0
        anonymous = [r for r in roots if self._anonymous(r)]
        for r in roots:
            if r in anonymous:
                continue
            if r in self.dims.allowed:
                vals = self.dims.allowed[r]
                sizes[r] = vals[0] if kind != "exact" else vals[-1] if vals[-1] <= 128 else vals[0]
                continue
            mult = self.dims.multiple_of.get(r, 1)
            if r in self.prefix_lengths:
                v = 2 if kind == "one" else 5
            elif r in self.partitioned:
                rows = self.partitioned[r]
                v = {"ragged": rows + 1, "exact": rows, "half": rows + rows // 4, "one": 1, "big": rows + 1}[
                    kind
                ]
            elif r in self.tiled:
                b = max(self.tiled[r], 1)
                if kind == "big":
                    # past twice the cap, so the loop over the dimension runs a ragged third
                    # tile; no larger (a 4097 x 4097 tensor went past the probe's budget)
                    v = 2 * self.block_driving[r] + 1 + 2 * tiled_i if r in self.block_driving else b + 1 + 2 * tiled_i
                else:
                    v = {"ragged": b + 1 + 2 * tiled_i, "exact": 2 * b, "half": b + max(b // 2, 1), "one": 1}[
                        kind
                    ]
                tiled_i += 1
            else:
                v = 1 if kind == "one" else PRIMES[prime_i % len(PRIMES)]
                prime_i += 1
            if mult > 1:
                v = max(mult, ((v + mult - 1) // mult) * mult)
            sizes[r] = v
        # a dimension nothing names or relates (`weight` of a norm, `cos` of rotary): as large as
        # any other size, so the kernel's own bounds decide, not our guess of its extent
        self._apply_divisibility(sizes, kind)
        self._size_derived_roots(sizes)
        big = max([v for v in sizes.values()] + [2])
        if self.anonymous_cap:
            big = min(big, self.anonymous_cap)  # a probe shrunk to fit (shrunk_probe.py)
        for r in anonymous:
            sizes[r] = big  # (in the size-1 probe too: a guess of 1 would invent overreads)
        self._size_related_roots(sizes)
        return sizes

    def _size_derived_roots(self, sizes: dict[str, int]) -> None:
        """A class whose representative is an expression (`assert offsets.numel() == E + 1`
        makes the offsets' length the class `(E+1)`) takes the expression's value, not a size
        of its own."""
        for r in list(sizes):
            if not r.startswith("("):
                continue

            def size_of(m: re.Match[str], derived: str = r) -> str:
                root = self.dims.find(m.group(0))
                if root == derived or root not in sizes:
                    raise KeyError(m.group(0))
                return str(sizes[root])

            try:
                text = re.sub(r"[A-Za-z_][\w.]*", size_of, r)
                value = _int_expr(ast.parse(text, mode="eval").body)
            except (KeyError, SyntaxError, ValueError, ZeroDivisionError):
                continue
            if value > 0:
                sizes[r] = value

    def _size_related_roots(self, sizes: dict[str, int]) -> None:
        """A class that an equality relates to an expression of other classes (`assert
        cos.shape[-1] * 2 == q.shape[-1]`, `assert M == HC * HC + 2 * HC`, `assert weight.shape
        == (G * D,)`) takes the expression's value at the others' sizes: a probe with a size of
        its own breaks the relation, and the launcher's assert refuses it. A relation over the
        class itself, or one that gives no positive whole number, leaves the size as chosen
        (the assert still refuses what it does not hold for)."""
        members: dict[str, list[str]] = {}
        for s in list(self.dims.parent):
            if s.startswith("("):
                root = self.dims.find(s)
                if root != s and not root.startswith("(") and root in sizes:
                    members.setdefault(root, []).append(s)
        done: set[str] = set()
        for _ in range(3):  # relations chained through other related classes settle in a few passes
            changed = False
            for root, exprs in sorted(members.items()):
                for e in sorted(exprs, key=len):
                    value = self._expression_size(e, root, sizes)
                    if value is None:
                        continue
                    if sizes[root] != value:
                        sizes[root] = value
                        changed = root not in done or changed
                    done.add(root)
                    break
            if not changed:
                return

    def _expression_size(self, expr: str, root: str, sizes: dict[str, int]) -> int | None:
        """The value of a derived symbol's expression at `sizes`, None where it reads `root`'s
        own class, a class without a size, or gives no positive whole number."""

        def size_of(m: re.Match[str]) -> str:
            r = self.dims.find(m.group(0))
            if r == root or r not in sizes:
                raise KeyError(m.group(0))
            return str(sizes[r])

        try:
            text = re.sub(r"[A-Za-z_][\w.]*", size_of, expr)
            value = _int_expr(ast.parse(text, mode="eval").body)
        except (KeyError, SyntaxError, ValueError, ZeroDivisionError, RecursionError):
            return None
        return value if 0 < value <= 1 << 20 else None

    def _apply_divisibility(self, sizes: dict[str, int], kind: str) -> None:
        """`assert H % H_KV == 0`: H is a whole number of groups of H_KV. Probes take groups
        larger than the divisor (H_KV = 2, H = 8), a real configuration (many query heads on few
        KV heads) in which mixing up the group size and the group count leaves the tensor."""
        for a, b in self.dims.divisible_by.items():
            ra, rb = self.dims.find(a), self.dims.find(b)
            if ra == rb or ra not in sizes or rb not in sizes:
                continue
            # (a relation only the kernel's `HV // H` implies: two groups, a size the probe's
            # cap holds where `2 * H` groups of H made HV = 512, launch.py `_kernel_divisions`)
            pair = (self.dims.find(a), self.dims.find(b))
            group = 1 if kind == "one" else 2 if pair in self.kernel_groups else 2 * sizes[rb]
            sizes[ra] = sizes[rb] * group


def _int_expr(e: ast.expr) -> int:
    """Value of an integer expression of literals and + - * // % (a derived dimension)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return e.value
    if isinstance(e, ast.BinOp) and type(e.op) in _INT_OPS:
        return _INT_OPS[type(e.op)](_int_expr(e.left), _int_expr(e.right))
    raise ValueError(ast.dump(e))


_INT_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
