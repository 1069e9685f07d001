"""Whether a probe's sizes satisfy the `if` tests its launch sits under.

`if combin_shape[dim] != 1: kernel[grid](...)` launches only where the test holds. The probes
choose sizes freely, and when the evaluator cannot decide such a test at them (`dim` is not
known), or decides it the other way, the probe runs the launch at sizes the code may never
launch it with: a bound judged there rests on the probe's choice, not on the code (issue 12,
rule 1). Such a launch is judged as a pick of that branch: what it finds is at most a hint
naming the test. A test decided as the branch needs stays silent, and so does a test about
the machine (`if torch.cuda.is_available():`) or one that reads no size (a dtype, a flag):
the sizes the launch sees do not hang on those."""

from __future__ import annotations

import ast
from typing import Any, Protocol

from argus.analyzers.errors import HOST_ERRORS
from argus.analyzers.model.host_values import Opaque, SymInt

_SIZE_ATTRS = frozenset({"shape", "ndim"})
_SIZE_METHODS = frozenset({"size", "numel", "dim", "stride", "nelement"})
_MAX_SHOWN = 80  # characters of a test quoted in a hint


class _Evaluator(Protocol):
    launch_guards: list[tuple[ast.expr, bool, Any]]

    def expr(self, node: ast.expr) -> Any: ...

    def environment_test(self, test: ast.expr) -> bool: ...


def unsettled_guards(ev: _Evaluator) -> tuple[str, ...]:
    """One named pick per size test the launch sits under that these sizes do not satisfy."""
    out: list[str] = []
    for test, inside, value in ev.launch_guards:
        if isinstance(value, bool | int) and not isinstance(value, Opaque) and bool(value) == inside:
            continue  # decided, and on the launch's side
        if ev.environment_test(test) or not _reads_size(ev, test):
            continue
        text = ast.unparse(test)
        if len(text) > _MAX_SHOWN:
            text = text[: _MAX_SHOWN - 3] + "..."
        side = "holds" if inside else "fails"
        how = "is not decided at these sizes" if isinstance(value, Opaque) else "these sizes contradict"
        out.append(f"the launch runs only where `{text}` {side}, which {how}")
    return tuple(dict.fromkeys(out))


def _reads_size(ev: _Evaluator, test: ast.expr) -> bool:
    """Whether the test reads a size: a tensor's shape or element count, or a value the
    launcher derived from sizes (a `SymInt`, a list of them)."""
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and n.attr in _SIZE_ATTRS:
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _SIZE_METHODS:
            return True
        if isinstance(n, ast.Name | ast.Subscript) and _is_size(_value(ev, n)):
            return True
    return False


def _value(ev: _Evaluator, node: ast.expr) -> Any:
    try:
        return ev.expr(node)
    except (*HOST_ERRORS, RecursionError):
        return None


def _is_size(v: Any) -> bool:
    if isinstance(v, SymInt):
        return True
    if isinstance(v, list | tuple):
        return any(isinstance(x, SymInt) for x in v[:16])
    return False


def empty_range(func: ast.FunctionDef, args: dict[str, Any], arange_params: set[str]) -> str | None:
    """A constexpr the probe's sizes make 0 or negative (`TDP = next_power_of_2(DT - D)` at
    DT < D) that sizes a `tl.arange` no test of it guards: Triton refuses to compile that
    launch, so the probe is no launch the code can make. Returns how, or None."""
    for name in sorted(arange_params):
        v = args.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v > 0:
            continue
        if any(_sizes_arange(n, name) and not _guarded(func, n, name) for n in ast.walk(func)):
            return f"`{name}` = {v} sizes a `tl.arange`, which Triton refuses to compile"
    return None


def _sizes_arange(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "arange"
        and any(isinstance(a, ast.Name) and a.id == name for a in node.args)
    )


def _guarded(func: ast.FunctionDef, call: ast.AST, name: str) -> bool:
    """Whether an `if` or a conditional expression around `call` tests `name`."""
    for n in ast.walk(func):
        if isinstance(n, ast.If | ast.IfExp) and any(x is call for x in ast.walk(n)):
            if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(n.test)):
                return True
    return False
