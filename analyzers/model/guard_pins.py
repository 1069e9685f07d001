"""Launcher parameters an `if X == C:` around the launch fixes: the probe takes that value.

flag-gems' `vector_norm(x, ord=2, ...)` launches `l0_norm_kernel` under `elif ord == 0:`, and
its losses launch one kernel per `if reduction == 0:` branch. The launch runs only where the
test holds, so the probe binds the parameter to the value the test names instead of its
default (or a size of its own), and the kernel is judged where it runs. Before this the
default contradicted the test and the probe was refused (host_guards.py), with an AR001.

Only a parameter of the launcher compared by `==` with a literal (a number, a string, a bool)
in a test whose `if` body holds the launch is pinned, including each `and`-ed part of it. The
test is still evaluated at the probe: a parameter the launcher reassigns before the test
(`dim = dim % x.ndim`) to a value the test then contradicts keeps the refusal.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import stored_names, subtree


def guard_pins(body: list[ast.stmt], call: ast.Call, params: set[str]) -> dict[str, Any]:
    """Parameter name -> the literal the tests around `call` in `body` compare it with."""
    pins: dict[str, Any] = {}
    # (kept on the call while its body is the same: every check binds the launch again)
    tests = on_node(call, "tests_around", lambda: _tests_around(body, call), body)
    for test in tests or []:
        for part in _conjuncts(test):
            pin = _pinned(part, params)
            if pin is not None and pin[0] not in pins:
                pins[pin[0]] = pin[1]
    return pins


def _tests_around(stmts: list[ast.stmt], call: ast.Call) -> list[ast.expr] | None:
    """The tests of the `if`s whose body (not `else`) holds `call`, outer first; None when
    `call` is not in `stmts`."""
    for st in stmts:
        if not any(n is call for n in subtree(st)):
            continue
        if isinstance(st, ast.If):
            inner = _tests_around(st.body, call)
            if inner is not None:
                return [st.test, *inner]
            return _tests_around(st.orelse, call) or []
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if isinstance(block, list):
                inner = _tests_around(block, call)
                if inner is not None:
                    return inner
        for handler in getattr(st, "handlers", []) or []:
            inner = _tests_around(handler.body, call)
            if inner is not None:
                return inner
        return []
    return None


def computed_pins(test: ast.expr, value_of: Callable[[ast.expr], Any]) -> dict[str, int]:
    """`elif dim == saved_v.ndim - 1: kernel[...]`: name -> the int the other side of an `==`
    in a test holding the launch takes on the launch's path (the binder pins a launcher
    parameter to it, as to a literal; host_guards.py notes it where the test is met)."""
    pins: dict[str, int] = {}
    for part in _conjuncts(test):
        if not isinstance(part, ast.Compare) or len(part.ops) != 1 or not isinstance(part.ops[0], ast.Eq):
            continue
        for name, other in ((part.left, part.comparators[0]), (part.comparators[0], part.left)):
            if not isinstance(name, ast.Name) or _literal(other) is not None:
                continue  # a literal is pinned before the evaluation (guard_pins)
            if any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(other)):
                continue  # `n == next_power_of_2(n)`: a property of n, not a value to take
            v = value_of(other)
            if type(v) is int:  # a plain number: not a size the probe chose (SymInt), not a bool
                pins.setdefault(name.id, v)
    return pins


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [p for v in test.values for p in _conjuncts(v)]
    return [test]


def _pinned(test: ast.expr, params: set[str]) -> tuple[str, Any] | None:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    for name, lit in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        value = _literal(lit)
        if isinstance(name, ast.Name) and name.id in params and value is not None:
            return name.id, value
    return None


def _literal(node: ast.expr) -> Any:
    """A number, string or bool written in the test (`0`, `-1`, `'mean'`); None otherwise."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if isinstance(inner, int | float) and not isinstance(inner, bool) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
        return node.value
    return None


def pin_computed(func: ast.FunctionDef, pins: dict[str, Any], ranks: dict[str, int] | None, ev: Any) -> bool:
    """Pins the launcher's number parameters to the values the tests holding the launch
    compare them with (`ev.pin_wants`, from computed_pins); True when one was pinned anew. A
    parameter the launcher assigns is left: a test of it tests that value, not the argument."""
    params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
    stored = on_node(func, "stored_names", lambda: frozenset(stored_names([func])))
    new = {
        k: v
        for k, v in ev.pin_wants.items()
        if k in params and k not in pins and k not in (ranks or {}) and k not in stored
    }
    pins.update(new)
    return bool(new)
