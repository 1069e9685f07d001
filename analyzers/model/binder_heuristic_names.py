"""The package functions a module's `@triton.heuristics({...})` tables name, as calls the
launcher's function gathering follows (host_functions.gather_functions).

The gathering starts from what a launcher body calls; `"BLOCK_M": heur_block_m` is called by
Triton, not by the launcher, so without these seeds binder_heuristics.py finds no definition to
evaluate and the entry is a stand-in. A seed is a statement `heur_block_m(args)` that is
never run: only its names are read, so that the function (of this module or imported from
another one of the package) and what it calls are in the launch's table of functions.
"""

from __future__ import annotations

import ast

_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, UnicodeDecodeError)


def heuristic_seeds(decorator_texts: list[str]) -> list[ast.stmt]:
    """One `f(args)` statement per function a heuristics table among `decorator_texts` (the
    decorators' source, `@` included) names or whose lambdas call."""
    names: set[str] = set()
    for text in decorator_texts:
        if "heuristics" not in text:
            continue
        try:
            dec = ast.parse(text.lstrip().removeprefix("@").strip(), mode="eval").body
        except _PARSE_ERRORS:
            continue
        if not isinstance(dec, ast.Call):
            continue
        table = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "values"), None)
        if isinstance(table, ast.Dict):
            for value in table.values:
                names |= _named(value)
    return [
        ast.Expr(ast.Call(func=ast.parse(n, mode="eval").body, args=[ast.Name(id="args", ctx=ast.Load())], keywords=[]))
        for n in sorted(names)
    ]


def _named(value: ast.expr) -> set[str]:
    """`f` or `m.f` an entry names, or the functions its lambda calls."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return {f"{value.value.id}.{value.attr}"}
    out: set[str] = set()
    if isinstance(value, ast.Lambda):
        for n in ast.walk(value.body):
            if isinstance(n, ast.Call):
                out |= _named(n.func) if isinstance(n.func, ast.Name | ast.Attribute) else set()
    return out
