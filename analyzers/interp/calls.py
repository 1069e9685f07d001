"""Calls: what a called value stands for, and the call of a `@triton.jit` helper.

The callee was evaluated by expressions.py into one of: a jit helper of the file, a method of a
tile, pointer or descriptor, a `tl.*` op or a Python builtin (both through the op registry), or a
dtype used as a cast. A helper call runs the helper's body in a fresh environment with its own
source map, so that what it records points into the helper; the call stack keeps the kernel's
call site for checks that judge at the kernel (reduction coverage).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import ops
from argus.analyzers.interp.values import DType, KernelReturn

if TYPE_CHECKING:
    from argus.analyzers.interp.context import RunContext


def call(interp: RunContext, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    if isinstance(fn, tuple) and fn and fn[0] == "helper":
        return call_helper(interp, fn[1], args, kwargs, node)
    if isinstance(fn, tuple) and fn and fn[0] == "method":
        return ops.method(interp, fn[1], fn[2], args, kwargs, node)
    if isinstance(fn, tuple) and fn and fn[0] in ("tl", "builtin"):
        return ops.call(interp, fn[1], args, kwargs, node)
    if isinstance(fn, DType):
        return ops.call(interp, "cast_to", [args[0], fn] if args else [fn], kwargs, node)
    raise Unevaluable(f"the call `{ast.unparse(node.func)}`", node)


def call_helper(interp: RunContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    helper = interp.helpers[name]
    fn = helper.func
    saved = interp.smap
    interp.call_stack.append((node, saved))
    pin = getattr(helper, "pinned_map", None)  # another file's helper: findings point at the call
    interp.smap = helper.smap if pin is None else pin(saved, node)
    home_consts = interp.module_consts
    own_consts = getattr(helper, "consts", None)  # another file's helper reads its own module's
    if own_consts is not None:
        interp.module_consts = own_consts
    try:
        env = _bind_arguments(interp, fn, name, args, kwargs, node)
        try:
            interp.block(fn.body, env)
        except KernelReturn as r:
            return r.value
        return None
    except Unevaluable as u:
        if pin is not None:  # what another file's helper does not model is placed at the call
            u.node, u.smap = node, saved
        elif u.smap is None:  # a node of the helper (or the call itself, a missing argument)
            u.smap = saved if u.node is node else interp.smap
        raise
    finally:
        interp.smap = saved
        interp.module_consts = home_consts
        interp.call_stack.pop()


def _bind_arguments(
    interp: RunContext, fn: ast.FunctionDef, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> dict[str, Any]:
    """The helper's environment: positional, then keyword arguments, then defaults (evaluated in
    the helper's own source map, left to right, each seeing the parameters bound before it)."""
    params = fn.args.posonlyargs + fn.args.args
    defaults = [None] * (len(params) - len(fn.args.defaults)) + list(fn.args.defaults)
    env: dict[str, Any] = {}
    for i, (p, d) in enumerate(zip(params, defaults, strict=True)):
        if i < len(args):
            env[p.arg] = args[i]
        elif p.arg in kwargs:
            env[p.arg] = kwargs[p.arg]
        elif d is not None:
            env[p.arg] = interp.expr(d, env)
        else:
            raise Unevaluable(f"a call of `{name}` without its argument `{p.arg}`", node)
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
        env[a.arg] = kwargs.get(a.arg, interp.expr(d, env) if d is not None else None)
    return env
