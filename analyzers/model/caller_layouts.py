"""Launcher parameters that every caller in the module hands over contiguous.

The probes give a tensor whose strides the launch passes a padded layout
(`launcher_strides.strides_read`): a launcher that communicates strides claims any layout,
and a kernel that addresses a fresh output with the input's strides is wrong for a padded
input (the output of `empty_like` of a non-dense tensor is contiguous). But an internal
launcher is often called only by an entry point that makes its inputs contiguous first
(torchao's `fp8_sdpa_quantize_func`:
`if not q.is_contiguous(): q = q.contiguous()`, then `qkv_quantize_func(q, k, v)`): there the
padded layout is a launch the code never makes, and what it finds stands on nothing. As with
the literals and size tests the module's callers pass (caller_literals.py, binder_callers.py),
the callers in the launcher's module are the evidence: a parameter counts as contiguous when
every such call passes `x.contiguous()`, or a name its caller made contiguous (assigned
`.contiguous()`, under `if not x.is_contiguous():` or not, or asserted `x.is_contiguous()`) on
the path to the call and did not assign again.
"""

from __future__ import annotations

import ast
import functools

from argus.analyzers.model.binder_callers import plain_calls
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.launcher_strides import asserted_contiguous, contiguity_tested
from argus.analyzers.model.nodes import stored_names, subtree

_MAX_SOURCE = 4 << 20  # as caller_literals.py: a larger module is not parsed again for its callers


def contiguous_from_callers(site: LaunchSite | None) -> frozenset[str]:
    """Parameters of the launcher holding `site` that every call of it in its module passes
    contiguous; empty where there is no such call, or a call spreads its arguments."""
    func = site.host_func if site is not None else None
    if site is None or func is None or len(site.smap.source) > _MAX_SOURCE:
        return frozenset()
    params = tuple(a.arg for a in func.args.posonlyargs + func.args.args)
    return _contiguous_params(site.smap.source, func.name, params)


@functools.lru_cache(maxsize=64)
def _contiguous_params(source: bytes, name: str, params: tuple[str, ...]) -> frozenset[str]:
    """(once per module text and launcher: every kernel and probe of the launcher asks)"""
    found: set[str] | None = None
    for caller, call in plain_calls(source, name) or ():
        if caller.name == name:
            continue  # (the launcher itself, or a method of the same name)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return frozenset()
        made = _made_contiguous(_path_before(caller.body, call))
        passed = [(params[i], a) for i, a in enumerate(call.args) if i < len(params)]
        passed += [(k.arg, k.value) for k in call.keywords if k.arg]
        here = {p for p, a in passed if _is_contiguous(a, made)}
        found = here if found is None else found & here
    return frozenset(found or ())


def _is_contiguous(arg: ast.expr, made: set[str]) -> bool:
    return (isinstance(arg, ast.Name) and arg.id in made) or _contiguous_call(arg)


def _contiguous_call(e: ast.expr) -> bool:
    """`x.contiguous()` (no memory-format argument)."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "contiguous"
        and not e.args
        and not e.keywords
    )


def _path_before(stmts: list[ast.stmt], call: ast.Call) -> list[ast.stmt]:
    """The statements run before `call` on its way down from `stmts`: those before the one
    holding it in each block it sits in, outer first."""
    out: list[ast.stmt] = []
    for st in stmts:
        if not any(n is call for n in subtree(st)):
            out.append(st)
            continue
        for block in (getattr(st, f, None) for f in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and any(n is call for s in block for n in subtree(s)):
                return out + _path_before(block, call)
        return out
    return out


def _made_contiguous(before: list[ast.stmt]) -> set[str]:
    """Names contiguous after `before` ran: made so by a statement of the path, and not
    assigned again by a later one (any assignment anywhere in it)."""
    made: set[str] = set()
    for st in before:
        target = _contiguous_assignment(st)
        if target is None and isinstance(st, ast.If) and not st.orelse:
            tested = _not_contiguous_test(st.test)
            if tested is not None and len(st.body) == 1 and _contiguous_assignment(st.body[0]) == tested:
                target = tested  # `if not x.is_contiguous(): x = x.contiguous()`
        made -= stored_names([st])
        if target is not None:
            made.add(target)
        made |= asserted_contiguous([st])
    return made


def _contiguous_assignment(st: ast.stmt) -> str | None:
    """`x = <expr>.contiguous()`: x."""
    if (
        isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and _contiguous_call(st.value)
    ):
        return st.targets[0].id
    return None


def _not_contiguous_test(test: ast.expr) -> str | None:
    """`not x.is_contiguous()`: x."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return contiguity_tested(test.operand)
    return None
