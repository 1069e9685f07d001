"""The launch grid: which dimension classes it tiles (`cdiv(X, B)`) or walks one index at a
time (batch-like names), and its concrete value under one probe's sizes."""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import SymInt


class GridBinding(BinderState):
    """Reads the grid expression of the launch (a tuple, a lambda of META, a local function)."""

    def _grid_roles(self, ev: HostEval, grid: ast.expr, meta: dict[str, Any]) -> None:
        expr = grid
        if isinstance(grid, ast.Name) and isinstance(ev.env.get(grid.id), tuple):
            val = ev.env[grid.id]
            if val and val[0] == "lambda":
                expr = val[1].body
            elif val and val[0] == "func":
                expr = next(
                    (s.value for s in ast.walk(val[1]) if isinstance(s, ast.Return) and s.value is not None),
                    grid,
                )
        elif isinstance(grid, ast.Lambda):
            expr = grid.body
        if isinstance(grid, ast.Name) and self.site is not None:
            for st in self.site.body_nodes:
                if isinstance(st, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == grid.id for t in st.targets
                ):
                    if st.lineno <= self.site.call.lineno:
                        expr = st.value.body if isinstance(st.value, ast.Lambda) else st.value
        sub = HostEval(self.dims, None, recording=True)
        sub.env = dict(ev.env)
        for n in (
            ast.walk(grid) if not isinstance(grid, ast.Name) else self.site.body_nodes if self.site else []
        ):
            if isinstance(n, ast.Lambda | ast.FunctionDef):
                for a in n.args.args:
                    sub.env[a.arg] = dict(meta)
        if isinstance(expr, ast.Name):
            return
        # find a grid assignment made earlier in the host body when the launch names a variable
        cdiv_first: set[int] = set()
        for n in ast.walk(expr):
            pair = None
            if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv") and len(n.args) == 2:
                pair = (n.args[0], n.args[1])
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv):
                pair = (n.left, n.right)  # `M // BLOCK_M` tiles M too (and drops its tail)
            if pair is not None:
                x = sub.expr(pair[0])
                b = sub.expr(pair[1])
                for m in ast.walk(pair[0]):
                    cdiv_first.add(id(m))
                if isinstance(x, SymInt) and isinstance(b, int):
                    # `cdiv(C * H * W, BLOCK)`: one factor carries the ragged tail, the others
                    # stay small (all of them ragged would make the tensor cubic in the block)
                    roots = sorted(self._roots_of(x.sym))
                    if roots:
                        self.tiled[roots[0]] = int(b)
                        self.bare |= set(roots[1:])
        for n in ast.walk(expr):
            if isinstance(n, ast.Name) and id(n) not in cdiv_first:
                v = sub.env.get(n.id)
                if isinstance(v, SymInt) and "//" not in v.sym:
                    self.bare |= self._roots_of(v.sym)
                # `num_tiles = cdiv(M, BM) * cdiv(N, BN)` computed earlier: tiled, not batch-like
        # an axis that counts only batch/head indices (`Z * H`, `B`): its programs see the same
        # tile geometry, so edge programs stand for the others
        if isinstance(expr, ast.Tuple):
            for i, el in enumerate(expr.elts):
                names = [n for n in ast.walk(el) if isinstance(n, ast.Name)]
                calls = [n for n in ast.walk(el) if isinstance(n, ast.Call)]
                if names and not calls and all(isinstance(sub.env.get(n.id), SymInt) for n in names):
                    self.bare_axes.add(i)

    def _grid(self, ev: HostEval, args: dict[str, Any]) -> tuple[tuple[int, int, int], int]:
        assert self.site is not None
        g = self.site.grid_node
        meta = {k: v for k, v in args.items() if isinstance(v, int | float | bool)}
        val = ev.expr(g)
        if isinstance(val, tuple) and val and val[0] == "lambda":
            lam = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = dict(val[2])
            if lam.args.args:
                sub.env[lam.args.args[0].arg] = meta
            val = sub.expr(lam.body)
        elif isinstance(val, tuple) and val and val[0] == "func":
            fn = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = dict(ev.env)
            if fn.args.args:
                sub.env[fn.args.args[0].arg] = meta
            ret = None
            for st in fn.body:
                if isinstance(st, ast.Return) and st.value is not None:
                    ret = sub.expr(st.value)
                    break
                sub.stmt(st)
            val = ret
        if isinstance(val, int) and not isinstance(val, bool):
            val = (val,)
        if isinstance(val, list):
            val = tuple(val)
        if (
            not isinstance(val, tuple)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in val)
            or not 1 <= len(val) <= 3
        ):
            raise Unevaluable(f"the grid `{ast.unparse(g)}`")
        dims = tuple(int(x) for x in val) + (1,) * (3 - len(val))
        return (dims[0], dims[1], dims[2]), len(val)
