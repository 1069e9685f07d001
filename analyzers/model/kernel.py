"""The kernel model: parameters, constexprs, autotune configs and heuristics of one `@triton.jit`.

tree-sitter finds the kernel and confines syntax errors to it; the kernel's own text is then read
with CPython's `ast`, the grammar Triton's JIT itself compiles from, so the checker sees exactly
the program Triton would.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import textwrap
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.findings import Span


@dataclass
class Param:
    name: str
    constexpr: bool
    default: ast.expr | None


@dataclass
class AutotuneInfo:
    configs: list[dict[str, Any]]
    key: list[str]
    reset_to_zero: list[str]
    restore_value: list[str]
    node: ast.Call  # the decorator call


@dataclass
class SourceMap:
    """Maps positions in a snippet parsed by `ast` back to bytes of the whole file."""

    source: bytes
    line_starts: list[int]
    row0: int  # file row of the snippet's first line
    indent: int  # bytes removed by dedent from each line

    def offset(self, lineno: int, col: int) -> int:
        row = self.row0 + lineno - 1
        row = min(max(row, 0), len(self.line_starts) - 1)
        return self.line_starts[row] + col + self.indent

    def span(self, node: ast.AST) -> Span:
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_lineno = getattr(node, "end_lineno", lineno) or lineno
        end_col = getattr(node, "end_col_offset", col) or col
        start = self.offset(lineno, col)
        end = self.offset(end_lineno, end_col)
        return Span(
            start,
            end,
            (self.row0 + lineno - 1, col + self.indent),
            (self.row0 + end_lineno - 1, end_col + self.indent),
        )


@dataclass
class Helper:
    """A `@triton.jit` function a kernel calls, parsed with its own source map."""

    func: ast.FunctionDef
    smap: SourceMap


@dataclass
class KernelModel:
    name: str
    func: ast.FunctionDef
    params: list[Param]
    smap: SourceMap
    autotune: AutotuneInfo | None = None
    heuristics: dict[str, ast.expr] = field(default_factory=dict)
    heuristics_node: ast.Call | None = None
    decorators: list[ast.expr] = field(default_factory=list)

    memo: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, make: Any) -> Any:
        """Per-kernel static facts computed once for all probe launches."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    @property
    def constexprs(self) -> list[str]:
        return [p.name for p in self.params if p.constexpr]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def line_starts(source: bytes) -> list[int]:
    """Byte offset of the start of every line."""
    return [0, *itertools.accumulate(len(line) + 1 for line in source.split(b"\n")[:-1])]


def parse_snippet(
    source: bytes, start_byte: int, end_byte: int, starts: list[int], row0: int
) -> tuple[ast.Module, SourceMap]:
    """Parse the bytes of one definition (dedented) with `ast`; raises SyntaxError."""
    line_begin = starts[row0]
    text = source[line_begin:end_byte].decode("utf-8")
    dedented = textwrap.dedent(text)
    first = text.split("\n", 1)[0]
    first_d = dedented.split("\n", 1)[0]
    indent = len(first.encode("utf-8")) - len(first_d.encode("utf-8"))
    tree = ast.parse(dedented)
    return tree, SourceMap(source, starts, row0, indent)


def _is_constexpr(ann: ast.expr | None) -> bool:
    if ann is None:
        return False
    text = ast.unparse(ann)
    return text.endswith("constexpr")


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


class _NotLiteral(Exception):
    pass


def safe_eval(node: ast.AST, env: dict[str, Any]) -> Any:
    """Evaluate literal structure, names bound in `env`, arithmetic and `range`: nothing else.
    Used for autotune config lists; it never calls anything from the user's file."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _NotLiteral(node.id)
    if isinstance(node, ast.List | ast.Tuple):
        return [safe_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            safe_eval(k, env): safe_eval(v, env)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -safe_eval(node.operand, env)
    if isinstance(node, ast.BinOp):
        a, b = safe_eval(node.left, env), safe_eval(node.right, env)
        ops = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.FloorDiv: lambda: a // b,
            ast.Pow: lambda: a**b,
            ast.LShift: lambda: a << b,
        }
        if type(node.op) in ops and isinstance(a, int | float) and isinstance(b, int | float):
            return ops[type(node.op)]()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        args = [safe_eval(a, env) for a in node.args]
        if all(isinstance(a, int) for a in args) and len(args) <= 3:
            return list(range(*args))
    raise _NotLiteral(ast.unparse(node))


def _config_dict(call: ast.Call, env: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """`triton.Config({"BLOCK": 64}, num_warps=4, num_stages=3)` -> {"BLOCK": 64, "num_warps": 4, ...}."""
    if not call.args and not call.keywords:
        return None
    env = env or {}
    kw = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "kwargs"), None)
    try:
        out = safe_eval(kw, env) if kw is not None else {}
    except _NotLiteral:
        return None
    if not isinstance(out, dict):
        return None
    for k in call.keywords:
        if k.arg in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
            with contextlib.suppress(_NotLiteral):
                out[k.arg] = safe_eval(k.value, env)
    return out


def expand_configs(
    node: ast.AST | None, module_consts: dict[str, Any], env0: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Autotune configs from a list, a list comprehension over literal ranges, a module
    constant, a call of a module function that returns one of those, or a sum of lists."""
    if node is None:
        return []
    if isinstance(node, ast.Name) and node.id in module_consts:
        return expand_configs(module_consts[node.id], module_consts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and f"{node.func.id}()" in module_consts
    ):
        env: dict[str, Any] = {}
        for name, value in (module_consts.get(f"{node.func.id}().locals") or {}).items():
            with contextlib.suppress(_NotLiteral, TypeError):
                env[name] = safe_eval(value, env)
        found = expand_configs(module_consts[f"{node.func.id}()"], module_consts, env)
        for alt in module_consts.get(f"{node.func.id}().alternatives") or []:
            if found:
                break
            found = expand_configs(alt, module_consts, env)
        return found
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return expand_configs(node.left, module_consts) + expand_configs(node.right, module_consts)
    if isinstance(node, ast.List | ast.Tuple):
        out = []
        for c in node.elts:
            if isinstance(c, ast.Call):
                d = _config_dict(c)
                if d is not None:
                    out.append(d)
        return out
    if isinstance(node, ast.ListComp) and isinstance(node.elt, ast.Call):
        envs: list[dict[str, Any]] = [{**_module_lists(node, module_consts), **(env0 or {})}]
        try:
            for gen in node.generators:
                new = []
                for env in envs:
                    for v in safe_eval(gen.iter, env):
                        e2 = dict(env)
                        if isinstance(gen.target, ast.Name):
                            e2[gen.target.id] = v
                        elif isinstance(gen.target, ast.Tuple) and isinstance(v, list | tuple):
                            for t, x in zip(gen.target.elts, v, strict=False):
                                if isinstance(t, ast.Name):
                                    e2[t.id] = x
                        if all(bool(safe_eval(cond, e2)) for cond in gen.ifs):
                            new.append(e2)
                envs = new[:64]
        except (_NotLiteral, TypeError):
            return []
        return [d for env in envs if (d := _config_dict(node.elt, env)) is not None]
    return []


def _module_lists(comp: ast.ListComp, module_consts: dict[str, Any]) -> dict[str, Any]:
    """Module constants a config comprehension iterates over (`for BK in BKV_LIST`), by value.
    `BKV_LIST = [32, 64] if check_shared_mem() else [16, 32]`: the configs differ by machine,
    and each branch's are ones the code runs somewhere, so both branches' values are taken."""
    out: dict[str, Any] = {}
    for gen in comp.generators:
        name = gen.iter.id if isinstance(gen.iter, ast.Name) else None
        node = module_consts.get(name) if name else None
        if not isinstance(node, ast.expr):
            continue
        branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]
        values: list[Any] = []
        try:
            for b in branches:
                v = safe_eval(b, {})
                values.extend(x for x in (v if isinstance(v, list) else [v]) if x not in values)
        except (_NotLiteral, TypeError):
            continue
        out[name] = values  # type: ignore[index]
    return out


def _str_list(node: ast.expr | None) -> list[str]:
    v = _literal(node) if node is not None else None
    if isinstance(v, str):
        return [v]
    if isinstance(v, list | tuple):
        return [x for x in v if isinstance(x, str)]
    return []


# decorators that take `triton.autotune`'s `configs` and `key` under another name (flag-gems'
# `libtuner`, which adds tuning strategies and a persistent cache on top)
AUTOTUNE_WRAPPERS = ("libtuner",)


def build_kernel_model(func: ast.FunctionDef, smap: SourceMap, module_consts: dict[str, Any]) -> KernelModel:
    args = func.args
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [Param(a.arg, _is_constexpr(a.annotation), d) for a, d in zip(positional, defaults, strict=True)]
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(a.arg, _is_constexpr(a.annotation), d))
    model = KernelModel(func.name, func, params, smap, decorators=list(func.decorator_list))
    for dec in func.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        name = ast.unparse(dec.func)
        if name.endswith("autotune") or name.split(".")[-1] in AUTOTUNE_WRAPPERS:
            cfg_node = (
                dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "configs"), None)
            )
            configs = expand_configs(cfg_node, module_consts)
            kws = {k.arg: k.value for k in dec.keywords}
            model.autotune = AutotuneInfo(
                configs=configs,
                key=_str_list(kws.get("key") or (dec.args[1] if len(dec.args) > 1 else None)),
                reset_to_zero=_str_list(kws.get("reset_to_zero")),
                restore_value=_str_list(kws.get("restore_value")),
                node=dec,
            )
        elif name.endswith("heuristics"):
            h = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "values"), None)
            if isinstance(h, ast.Dict):
                for k, v in zip(h.keys, h.values, strict=True):
                    key = _literal(k) if k is not None else None
                    if isinstance(key, str):
                        model.heuristics[key] = v
                model.heuristics_node = dec
    return model
