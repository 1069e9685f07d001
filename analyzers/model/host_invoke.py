"""Calling a host function (model/host_functions.py) inside the host evaluator: bind its
parameters, run its body in a fresh scope (its module's names, or the launcher's for a function
defined inside the launcher), and take the value of the `return` reached.

Control flow inside a called function is followed only where the evaluator can decide it: a
`return` or `raise` under an undecided condition or in a loop makes the call's value opaque,
and a name a skipped loop or undecided branch assigns becomes opaque after it, so a value is
never the stale one from before the branch.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.host_functions import MAX_CALL_DEPTH, HostFunction
from argus.analyzers.model.host_loops import SEARCHED
from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.nodes import stored_names
from argus.analyzers.model.refusal_bounds import AtLeast, refused_bound, renamed


class Returned(Exception):  # noqa: N818  (control flow, not an error)
    """A `return` reached in a called function."""

    def __init__(self, value: Any) -> None:
        super().__init__("return")
        self.value = value


class UnknownResult(Exception):  # noqa: N818
    """The called function's result depends on what the evaluator cannot decide. `gives_value`:
    every way out of the undecided part returns a value (`if ...: return 128` / `return 64`),
    none raises, loops or leaves a handler, so the helper does give some value here."""

    def __init__(self, gives_value: bool = False) -> None:
        super().__init__()
        self.gives_value = gives_value


class LoopJump(Exception):  # noqa: N818  (control flow, not an error)
    """A `break` (`stop`) or `continue` reached in a loop `_search_loop` runs item by item."""

    def __init__(self, stop: bool) -> None:
        super().__init__("break" if stop else "continue")
        self.stop = stop


class NoValue(Opaque):
    """A helper call with no value the evaluator reaches: it raises on this path, recurses or
    runs past the call bounds, leaves from a loop or a handler. Unknown like any `Opaque`, and
    never a pick (helper_picks.py): there may be no launch at all."""


def only_returns(stmts: list[ast.stmt]) -> bool:
    """Whether the ways out of `stmts` are all `return`s outside loops and handlers."""
    for n in ast.walk(ast.Module(body=stmts, type_ignores=[])):
        if isinstance(n, ast.Raise | ast.For | ast.While | ast.AsyncFor | ast.Try):
            return False
    return True


def exits(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` hold a `return` or `raise` of the function they are in."""
    todo: list[ast.AST] = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return | ast.Raise):
            return True
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


_NO_DEFAULT = object()  # a keyword-only parameter without a default (ast's kw_defaults None)


class HostInvoke:
    """Mixin of HostEval: calls of functions the launcher's module (or the launcher) defines."""

    env: dict[str, Any]
    call_depth: int
    calls_left: int
    search_loops: int = 0  # loops `_search_loop` is running: a `break` / `continue` has one to end
    broken_asserts: list[ast.expr]

    def callee(self, fname: str) -> Any:
        """The function value `fname` names in the current scope (None when it names none)."""
        v = self.env.get(fname) if fname else None
        if isinstance(v, HostFunction):
            return v
        if isinstance(v, tuple) and len(v) == 2 and v[0] == "func" and isinstance(v[1], ast.FunctionDef):
            return v
        return None

    def invoke(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if isinstance(fn, HostFunction):
            node_def, scope = fn.node, dict(fn.globals)
        else:
            node_def, scope = fn[1], dict(self.env)  # defined in the launcher: its names are seen
        name = node_def.name
        if self.call_depth >= MAX_CALL_DEPTH or self.calls_left <= 0:
            return NoValue(name)
        self.calls_left -= 1
        bound = self._bind_call(node_def, scope, args, kwargs)
        if bound is None:
            return NoValue(name)
        saved, asserts_before, loops = self.env, len(self.broken_asserts), self.search_loops
        self.env, self.search_loops = bound, 0  # a `break` in the callee never ends the caller's loop
        self.call_depth += 1
        try:
            self.run_function(node_def.body)  # type: ignore[attr-defined]
            result: Any = None
        except Returned as r:
            result = r.value
        except UnknownResult as u:
            result = Opaque(name) if u.gives_value else NoValue(name)
        except RecursionError:
            result = NoValue(name)
        finally:
            self.env, self.search_loops = saved, loops
            self.call_depth -= 1
        if isinstance(result, Opaque):
            # an unknown result is the helper's (`min(n, props.smem // k)` inside it): named
            # after the helper, as notes and helper_picks.py read it
            result = NoValue(name) if isinstance(result, NoValue) else renamed(result, name)
        elif isinstance(result, tuple) and any(_searched(x) for x in result):
            # `return block_n, block_k, block_m` with a size a device-dependent search picked
            # (`for bn in [128, 64, 32]: if cdiv(N, bn) >= cores: break`): that item is the
            # helper's too (`block_n, ... = helper(...)` unpacks it; helper_picks.py)
            result = tuple(Opaque(name) if _searched(x) else x for x in result)
        if self.call_depth == 0 and len(self.broken_asserts) > asserts_before:
            # an assert inside the helper: findings point at the launcher's call of it
            del self.broken_asserts[asserts_before:]
            self.broken_asserts.append(node)  # type: ignore[arg-type]
        return result

    def _bind_call(
        self, fn: ast.FunctionDef, scope: dict[str, Any], args: list[Any], kwargs: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The function's scope with its parameters bound; None when the call does not fit."""
        a = fn.args
        positional = a.posonlyargs + a.args
        saved = self.env
        self.env = scope
        try:
            defaults = [self.expr(d) for d in a.defaults]  # type: ignore[attr-defined]
            # `_NO_DEFAULT` where the parameter has none: a `*, chunk_size=None` default is the
            # value None, which a real call may leave in place
            kw_defaults = [_NO_DEFAULT if d is None else self.expr(d) for d in a.kw_defaults]  # type: ignore[attr-defined]
        finally:
            self.env = saved
        env = dict(scope)
        first_default = len(positional) - len(defaults)
        for i, p in enumerate(positional):
            if i < len(args):
                env[p.arg] = args[i]
            elif p.arg in kwargs:
                env[p.arg] = kwargs[p.arg]
            elif i >= first_default:
                env[p.arg] = defaults[i - first_default]
            else:
                return None
        if len(args) > len(positional):
            if a.vararg is None:
                return None
            env[a.vararg.arg] = tuple(args[len(positional) :])
        elif a.vararg is not None:
            env[a.vararg.arg] = ()
        for p, d in zip(a.kwonlyargs, kw_defaults, strict=True):
            if p.arg in kwargs:
                env[p.arg] = kwargs[p.arg]
            elif d is not _NO_DEFAULT:
                env[p.arg] = d
            else:
                return None
        names = {p.arg for p in positional + a.kwonlyargs}
        extra = {k: v for k, v in kwargs.items() if k not in names}
        if a.kwarg is not None:
            env[a.kwarg.arg] = extra
        elif extra:
            return None
        return env

    def run_function(self, body: list[ast.stmt]) -> None:
        for st in body:
            self.stmt(st)  # type: ignore[attr-defined]

    def function_stmt(self, st: ast.stmt) -> bool:
        """Statements only a called function's body needs; True when `st` was handled."""
        if isinstance(st, ast.Return):
            raise Returned(None if st.value is None else self.expr(st.value))  # type: ignore[attr-defined]
        if isinstance(st, ast.Raise):
            raise UnknownResult  # this path raises: no value comes back
        if isinstance(st, ast.Break | ast.Continue):
            if not self.search_loops:
                raise UnknownResult  # a loop not run item by item: where it leaves is not known
            raise LoopJump(isinstance(st, ast.Break))
        if isinstance(st, ast.For | ast.While | ast.AsyncFor):
            if exits(st.body + st.orelse):
                self._search_loop(st)
                return True
            if isinstance(st, ast.AsyncFor):
                for n in stored_names([st]):
                    self.env[n] = Opaque("loop")
            else:
                self.run_loop(st)  # type: ignore[attr-defined]  # known items one by one, else unknown names
            return True
        if isinstance(st, ast.With | ast.AsyncWith):
            self.run_function(st.body)
            return True
        if isinstance(st, ast.Try):
            if exits(st.handlers) or exits(st.finalbody):  # type: ignore[arg-type]
                raise UnknownResult
            self.run_function(st.body + st.orelse + st.finalbody)
            return True
        return False

    def _search_loop(self, st: ast.For | ast.While | ast.AsyncFor) -> None:
        """A loop that returns from the function: `for mb in (4, 8, 16, 32): if n <= mb:
        return mb` (liger's block-count helpers), `for BK in (128, 64, 32): if cap < BK:
        continue` / `for BV in ...: if peak(BK, BV) <= budget: return BK, BV` (fla's Ascend
        tile searches). Over items the evaluator knows, it is run item by item, so the `return`
        the probe's sizes reach gives the value (host.py decides each test; an undecided one
        raises UnknownResult as anywhere in a helper). A `break` or `continue` of this loop
        reached at a decided test ends the item or the loop as in Python; one under an
        undecided test makes the result unknown (undecided_branch). A `yield`, or items not
        known, leave the result unknown."""
        items = self.known_items(self.expr(st.iter)) if isinstance(st, ast.For) else None  # type: ignore[attr-defined]
        if items is None or _yields(st.body) or len(items) > self.loop_steps_left:  # type: ignore[attr-defined]
            raise UnknownResult
        self.search_loops += 1
        try:
            for item in items:
                self.loop_steps_left -= 1  # type: ignore[attr-defined]
                self.assign(st.target, item)  # type: ignore[attr-defined]
                try:
                    self.run_function(st.body)
                except LoopJump as j:
                    if j.stop:
                        break
            else:
                self.run_function(st.orelse)
        except UnknownResult as u:
            # an undecided `return` inside: a value only where the body's ways out all return
            raise UnknownResult(u.gives_value and only_returns(st.body)) from u
        finally:
            self.search_loops -= 1

    def undecided_branch(self, st: ast.If) -> None:
        """An `if` whose condition is unknown, inside a called function."""
        if self.call_depth == 0:
            return
        bound = None if st.orelse else refused_bound(st.test, st.body, self.expr)  # type: ignore[attr-defined]
        if bound is not None:
            # `if D > BD: raise` of an unknown BD: the launches that happen have BD >= D
            name, low = bound
            held = self.env.get(name)
            if isinstance(held, Opaque):
                self.env[name] = AtLeast(held.what, low)
                return
        if exits(st.body) or exits(st.orelse):
            raise UnknownResult(gives_value=only_returns(st.body + st.orelse))
        if _jumps_out(st.body + st.orelse):
            raise UnknownResult  # `if ...: continue` undecided: which items the search skips is not known
        self.join_branches(st)  # type: ignore[attr-defined]  # names the sides leave different: unknown


def _searched(x: Any) -> bool:
    return type(x) is Opaque and x.what == SEARCHED


def _yields(stmts: list[ast.stmt]) -> bool:
    """A `yield` in `stmts` (a nested function's included: the safe side)."""
    return any(isinstance(n, ast.Yield | ast.YieldFrom) for st in stmts for n in ast.walk(st))


def _jumps_out(stmts: list[ast.stmt]) -> bool:
    """A `break` or `continue` in `stmts` that leaves the loop around them (not one of a
    loop or function nested in them)."""
    todo: list[ast.AST] = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break | ast.Continue):
            return True
        if isinstance(n, ast.For | ast.While | ast.AsyncFor):
            todo.extend(n.orelse)  # a loop's `else` belongs to the loop around it
            continue
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False
