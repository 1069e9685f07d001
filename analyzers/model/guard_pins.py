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
from typing import Any


def guard_pins(body: list[ast.stmt], call: ast.Call, params: set[str]) -> dict[str, Any]:
    """Parameter name -> the literal the tests around `call` in `body` compare it with."""
    pins: dict[str, Any] = {}
    for test in _tests_around(body, call) or []:
        for part in _conjuncts(test):
            pin = _pinned(part, params)
            if pin is not None and pin[0] not in pins:
                pins[pin[0]] = pin[1]
    return pins


def _tests_around(stmts: list[ast.stmt], call: ast.Call) -> list[ast.expr] | None:
    """The tests of the `if`s whose body (not `else`) holds `call`, outer first; None when
    `call` is not in `stmts`."""
    for st in stmts:
        if not any(n is call for n in ast.walk(st)):
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
