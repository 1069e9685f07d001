"""The launch grid: which dimension classes it tiles (`cdiv(X, B)`) or walks one index at a
time (batch-like names), and its concrete value under one probe's sizes."""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import Opaque, SymInt
from argus.analyzers.model.launch_args import local_value


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

    def _grid(
        self, ev: HostEval, args: dict[str, Any], kargs: dict[str, Any] | None = None
    ) -> tuple[tuple[int, int, int], int, list[tuple[int, str]]]:
        """The probe's grid, its number of axes, and the picks it rests on. A value the kernel
        also receives as an argument takes that argument's probe value (`cdiv(N, B)` with `B`
        unknown and passed as `BLOCK`: the grid the launch makes with that block); an axis the
        code does not establish otherwise (a device property, `min(num_sms, tiles)`, a value of
        a helper the evaluator cannot follow) launches GRID_STAND_IN programs, and the pick is
        named: coverage is then not judged and findings resting on it are hints."""
        assert self.site is not None
        g = self.site.grid_node
        meta = {k: v for k, v in args.items() if isinstance(v, int | float | bool)}
        shared = _stand_ins_by_identity(kargs or {}, args)
        val = self._grid_value(ev, g, meta, {})
        passed: list[tuple[int, str]] = []
        if shared and not _all_ints(val):
            passed = self._passed_axes(val, kargs or {}, shared, g)
            val = self._grid_value(ev, g, meta, shared)
        if isinstance(val, int) and not isinstance(val, bool):
            val = (val,)
        if isinstance(val, list):
            val = tuple(val)
        if isinstance(val, Opaque):
            val = (val,) * _program_axes(self.kernel.func)
        if not isinstance(val, tuple) or not 1 <= len(val) <= 3:
            raise Unevaluable(f"the grid `{ast.unparse(g)}`")
        picks: list[tuple[int, str]] = []
        axes: list[int] = []
        for i, x in enumerate(val):
            if isinstance(x, int) and not isinstance(x, bool):
                axes.append(int(x))
            elif isinstance(x, Opaque):
                axes.append(GRID_STAND_IN)
                picks.append(
                    (i, f"grid axis {i} of `{ast.unparse(g)}` ({x.what}) = {GRID_STAND_IN} programs")
                )
            else:
                raise Unevaluable(f"the grid `{ast.unparse(g)}`")
        dims = tuple(axes) + (1,) * (3 - len(axes))
        return (dims[0], dims[1], dims[2]), len(axes), picks + passed

    def _passed_axes(
        self, val: Any, kargs: dict[str, Any], shared: dict[int, int], g: ast.expr
    ) -> list[tuple[int, str]]:
        """Grid axes that are the very unknown value the launch also passes as a runtime
        argument (`num_core = props["num_aicore"]; k[(num_core,)](..., num_core=num_core)`, a
        persistent kernel striding its tasks by the programs there are): the axis and the
        argument are one pick, named like a grid axis of a device property, and the argument is
        no stand-in of its own (no AR001). Each such argument is noted in `grid_sized`. Where
        the kernel strides a task loop by it (persistent.py), every task runs whatever the
        count, so nothing rests on the pick and it is not named."""
        out: list[tuple[int, str]] = []
        items = val if isinstance(val, tuple | list) else (val,)
        for i, x in enumerate(items):
            if not isinstance(x, Opaque) or id(x) not in shared:
                continue
            names = [
                n for n, v in kargs.items()
                if v is x and n in self.assumed_values and not self._is_constexpr(n)
            ]
            if not names:
                continue
            for n in names:
                self.assumed_values.pop(n)
                self.grid_sized.add(n)
            if set(names) <= self.persistent_counts:
                continue  # a persistent loop covers every task whatever the count: no pick
            out.append((i, f"grid axis {i} of `{ast.unparse(g)}` ({x.what}, passed as `{names[0]}`) = {shared[id(x)]} programs"))
        return out

    def _is_constexpr(self, name: str) -> bool:
        p = self.kernel.param(name)
        return p is not None and p.constexpr

    def _grid_value(self, ev: HostEval, g: ast.expr, meta: dict[str, Any], shared: dict[int, int]) -> Any:
        """The grid expression's value: a tuple, a lambda of META, a local function. `shared`
        maps unknown values (by identity) to the probe value of the argument they are passed as."""
        env = _patched(ev.env, shared)
        top = HostEval(self.dims, {}, recording=False)
        top.env = env
        val = top.expr(g) if shared else ev.expr(g)
        if shared and isinstance(g, ast.Name) and self.site is not None and not _is_callable_grid(val):
            # `grid = (cdiv(M, BS), 1)` computed earlier: compute it again with the shared values
            assigned = local_value(self.site, g.id)
            if assigned is not None:
                val = top.expr(assigned)
        if isinstance(val, tuple) and val and val[0] == "lambda":
            lam = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = _patched(dict(val[2]), shared)
            if lam.args.args:
                sub.env[lam.args.args[0].arg] = meta
            return sub.expr(lam.body)
        if isinstance(val, tuple) and val and val[0] == "func":
            fn = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = dict(env)
            if fn.args.args:
                sub.env[fn.args.args[0].arg] = meta
            for st in fn.body:
                if isinstance(st, ast.Return) and st.value is not None:
                    return sub.expr(st.value)
                sub.stmt(st)
            return None
        return val


GRID_STAND_IN = 3  # programs on a grid axis the code does not establish (as other runtime stand-ins)


def _is_callable_grid(val: Any) -> bool:
    return isinstance(val, tuple) and bool(val) and val[0] in ("lambda", "func")


def _all_ints(val: Any) -> bool:
    items = val if isinstance(val, tuple | list) else (val,)
    return all(isinstance(x, int) and not isinstance(x, bool) for x in items)


def _stand_ins_by_identity(kargs: dict[str, Any], args: dict[str, Any]) -> dict[int, int]:
    """Unknown host values the launch passes to the kernel -> the number the probe gave them."""
    out: dict[int, int] = {}
    for name, host in kargs.items():
        v = args.get(name)
        if isinstance(host, Opaque) and isinstance(v, int) and not isinstance(v, bool):
            out[id(host)] = int(v)
    return out


def _patched(env: dict[str, Any], shared: dict[int, int]) -> dict[str, Any]:
    if not shared:
        return env
    return {k: shared.get(id(v), v) if isinstance(v, Opaque) else v for k, v in env.items()}


def _program_axes(func: ast.FunctionDef) -> int:
    """How many grid axes the kernel reads (`tl.program_id(1)`: two); one when it reads none."""
    return max(program_axes_read(func, ("program_id", "num_programs")), default=0) + 1


def program_axes_read(func: ast.FunctionDef, calls: tuple[str, ...]) -> set[int]:
    """The grid axes the kernel passes to `tl.program_id` / `tl.num_programs` (as named in
    `calls`); an axis that is not a literal counts as every axis."""
    out: set[int] = set()
    for n in ast.walk(func):
        if isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] in calls:
            arg = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "axis"), None)
            if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and 0 <= arg.value <= 2:
                out.add(arg.value)
            else:
                out |= {0, 1, 2}
    return out
