"""Launcher parameters every caller in the launcher's module passes the same literal for.

flag-gems' `isin_by_search(in0, in1, invert, unique_in0, unique_in1)` branches on
`if unique_in0:` before it measures its inputs, and both of its callers pass
`unique_in0=False`. The probe bound the flag freely, the branch was not decided, and the joined
value of the two sides left the kernel's sizes unknown (an AR001). The module's own calls say
which value the launch runs with: where every call of the function in its module passes one
literal for a parameter (or leaves it at a literal default), the probe takes it, a launch the
code makes, as is the first call's where the calls pass different literals (the choice named in
the findings' sizes). A parameter some call passes otherwise (a name, `*args`) keeps the
probe's own binding.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.binder_callers import plain_calls
from argus.analyzers.model.launch_site import LaunchSite

_UNSET = object()
_MAX_SOURCE = 4 << 20  # a module larger than this is not parsed again for its callers


def caller_literals(site: LaunchSite | None) -> dict[str, list[Any]]:
    """Parameter -> the literals the calls of the launcher function in its module give it
    (distinct, in the order of the calls), where every call gives one; empty where there is
    no such call. One literal: the value the launch runs with; several: each is a launch the
    code makes, and the probes take the first (`caller_pick`)."""
    func = site.host_func if site is not None else None
    if site is None or func is None or len(site.smap.source) > _MAX_SOURCE:
        return {}
    calls = [call for caller, call in plain_calls(site.smap.source, func.name) or () if caller is not func]
    if not calls:
        return {}
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    defaults = dict(zip(params[len(params) - len(func.args.defaults) :], func.args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True) if d})
    out: dict[str, list[Any]] = {}
    for name in params + [a.arg for a in func.args.kwonlyargs]:
        values = [_passed(call, name, params, defaults) for call in calls]
        if all(v is not _UNSET for v in values):
            out[name] = list({(type(v), v): v for v in values}.values())
    return out


def caller_pick(name: str, values: list[Any]) -> tuple[Any, str | None]:
    """The value the probe gives a parameter the module's calls pass literals for: the first
    call's, a launch the code makes (every probe takes it: another call's value may lead
    where the evaluator cannot follow, and this one is no guess), and the choice named where
    the calls differ (None where they agree)."""
    if len(values) == 1:
        return values[0], None
    return values[0], f"`{name}` (the value its first caller passes) = {values[0]!r}"


def _passed(call: ast.Call, name: str, params: list[str], defaults: dict[str, ast.expr]) -> Any:
    """The literal `call` gives `name` (its default where it passes none); _UNSET where it
    passes something else, or spreads `*args` / `**kwargs`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return _UNSET
    node: ast.expr | None = None
    if name in params and params.index(name) < len(call.args):
        node = call.args[params.index(name)]
    for k in call.keywords:
        if k.arg == name:
            node = k.value
    if node is None:
        node = defaults.get(name)
    return _UNSET if node is None else _literal(node)


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float | str) and node.value is not None:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        return -v if isinstance(v, int | float) and not isinstance(v, bool) else _UNSET
    return _UNSET
