"""The arguments of a launch call with `*args` and `**kwargs` spread out.

Launchers often gather the arguments first (`args = (x, y, n)`, `consts = dict(BLOCK=b)`,
`kernel[grid](*args, **consts)`). A spread whose contents the launcher shows is read like the
arguments written out. A `**options` whose contents are unknown can still be bound when every
kernel parameter the call must give is already given: passing one twice is an error in Python,
so what the unknown mapping holds can only be launch options (`num_warps`, ...). Anything else
stays unevaluable (an AR001 note), never guessed.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.kernel import KernelModel
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.node_memo import on_node


def local_value(site: LaunchSite, name: str) -> ast.expr | None:
    """The expression last assigned to `name` in the launcher before the launch (one
    assignment only: a name assigned twice or in a loop is not followed)."""
    found = on_node(site.call, "local_values", lambda: _local_values(site), site.body).get(name, [])
    return found[0] if len(found) == 1 else None


def _local_values(site: LaunchSite) -> dict[str, list[ast.expr]]:
    """Every name assigned alone (`x = ...`) in the launcher before the launch, with the values
    in the launcher's node order: asked for every spread argument by every probe, indexed once
    per launch call (node_memo.py)."""
    out: dict[str, list[ast.expr]] = {}
    for n in site.body_nodes:
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.lineno <= site.call.lineno
        ):
            out.setdefault(n.targets[0].id, []).append(n.value)
    return out


def _spread_source(site: LaunchSite, e: ast.expr) -> ast.expr | None:
    return local_value(site, e.id) if isinstance(e, ast.Name) else e


def positional_exprs(site: LaunchSite) -> list[ast.expr]:
    """The positional argument expressions; a `*xs` of a literal tuple or list is spread, and
    pairing stops at one whose items the launcher does not show."""
    out: list[ast.expr] = []
    for a in site.call.args:
        if not isinstance(a, ast.Starred):
            out.append(a)
            continue
        src = _spread_source(site, a.value)
        if not isinstance(src, ast.Tuple | ast.List) or any(isinstance(x, ast.Starred) for x in src.elts):
            break
        out.extend(src.elts)
    return out


def keyword_exprs(site: LaunchSite) -> list[tuple[str, ast.expr]]:
    """The keyword argument expressions; a `**m` of a literal dict (string keys) or of a
    `dict(k=v, ...)` call is spread, an unknown mapping is left out."""
    out: list[tuple[str, ast.expr]] = []
    for k in site.call.keywords:
        if k.arg is not None:
            out.append((k.arg, k.value))
            continue
        src = _spread_source(site, k.value)
        if isinstance(src, ast.Dict) and all(
            isinstance(key, ast.Constant) and isinstance(key.value, str) for key in src.keys
        ):
            out.extend((key.value, v) for key, v in zip(src.keys, src.values, strict=True))  # type: ignore[union-attr]
        elif (
            isinstance(src, ast.Call)
            and isinstance(src.func, ast.Name)
            and src.func.id == "dict"
            and not src.args
            and all(kw.arg for kw in src.keywords)
        ):
            out.extend((kw.arg, kw.value) for kw in src.keywords if kw.arg)
    return out


def bound_by_call(kernel: KernelModel) -> set[str]:
    """Parameters a launch must pass: not filled by a heuristic or an autotune config."""
    tuned = {k for cfg in (kernel.autotune.configs if kernel.autotune else []) for k in cfg}
    return {p.name for p in kernel.params if p.name not in kernel.heuristics and p.name not in tuned}


def evaluate_launch_args(ev: HostEval, site: LaunchSite, kernel: KernelModel) -> dict[str, Any]:
    """Kernel parameter -> host value of the launch's arguments (spreads evaluated)."""
    params = [p.name for p in kernel.params]
    positional = ev.elements(site.call.args)
    if isinstance(positional, Opaque):
        raise Unevaluable("a *args launch")
    out: dict[str, Any] = dict(zip(params, positional, strict=False))
    unknown_mapping = False
    for k in site.call.keywords:
        if k.arg is not None:
            out[k.arg] = ev.expr(k.value)
            continue
        mapping = ev.expr(k.value)
        if isinstance(mapping, dict) and all(isinstance(key, str) for key in mapping):
            out.update(mapping)
        else:
            unknown_mapping = True
    if unknown_mapping and not bound_by_call(kernel) <= set(out):
        raise Unevaluable("a **kwargs launch")
    return out
