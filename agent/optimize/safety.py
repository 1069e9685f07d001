"""The static half of the anti-cheat checks: a candidate is untrusted code, read with `ast`, never run here.

Only what the candidate *changes* is judged: top-level definitions whose text differs from the user's
file, new definitions, new imports and module-level statements; in a changed definition, only the
constructs the user's own version of it does not already have. Unchanged code is the user's own.
A changed definition must not
- compute with torch outside the kernel (`torch.matmul`, `a @ b`, `x.softmax()`, ...): the speed must come
  from the Triton kernel, and the correctness gate must compare a kernel with the reference;
- start threads, processes or CUDA streams, or import modules that do (threading, subprocess, ...);
- patch anything: assign to an attribute of a module or class it did not create, call setattr, or
  touch builtins, sys.modules or the reference.
Library imports the knowledge policy writes (`knowledge.kernels.*`) are allowed and checked by gate 1.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

ALLOWED_MODULES = ("torch", "triton", "math", "functools", "typing", "__future__", "argus.knowledge.kernels", "dataclasses")
FORBIDDEN_MODULES = (
    "threading", "_thread", "multiprocessing", "concurrent", "subprocess", "os", "sys", "ctypes",
    "importlib", "builtins", "socket", "signal", "asyncio", "numpy", "cupy", "gc", "inspect",
)
#: torch functions a launcher may call: allocation, shapes and dtypes, nothing that computes results.
TORCH_ALLOWED = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "full", "full_like", "arange",
    "device", "dtype", "Size", "Tensor", "is_tensor", "finfo", "iinfo", "get_device_properties",
    "current_device", "is_available", "get_device_capability", "float16", "bfloat16", "float32",
    "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "float8_e4m3fn", "float8_e5m2",
}
TORCH_FORBIDDEN_ATTRS = {"Stream", "stream", "set_stream", "Event", "cuda.graph", "CUDAGraph", "compile", "jit"}
#: Tensor methods that compute a result on the host side of the kernel (torch kernels, not Triton).
COMPUTE_METHODS = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "softmax", "log_softmax", "sum", "mean",
    "exp", "exp2", "sort", "topk", "argsort", "cumsum", "prod", "norm", "dot", "mv", "scatter_add",
    "index_add", "index_add_", "copy_", "clone", "masked_fill", "relu", "sigmoid", "silu", "gelu",
    "tanh", "sdpa", "scaled_dot_product_attention", "linear", "conv2d", "conv1d", "amax", "logsumexp",
}
PATCH_CALLS = {"setattr", "delattr", "exec", "eval", "compile", "__import__", "globals", "vars", "open"}


@dataclass(frozen=True)
class Violation:
    """One forbidden construct: what it is and where (1-based line in the candidate)."""

    line: int
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"code": "ANTICHEAT", "line": self.line, "message": self.message}


def changed_nodes(original: str, candidate: str) -> list[ast.stmt]:
    """Top-level statements of `candidate` whose text is not in `original`'s top level."""
    old = {ast.dump(n) for n in ast.parse(original).body}
    return [n for n in ast.parse(candidate).body if ast.dump(n) not in old]


def check_candidate(original: str, candidate: str, protected: tuple[str, ...] = ()) -> list[Violation]:
    """Every anti-cheat violation in what the candidate changed. `protected`: names it must not redefine."""
    try:
        nodes = changed_nodes(original, candidate)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, f"does not parse: {exc.msg}")]
    before = {getattr(n, "name", None): n for n in ast.parse(original).body if hasattr(n, "name")}
    out: list[Violation] = []
    for node in nodes:
        name = getattr(node, "name", None)
        if name in protected:
            out.append(Violation(node.lineno, f"redefines `{name}`, which the gates use as the reference"))
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.extend(_check_import(node))
        elif _is_jit(node):
            continue  # Triton code: compiled by Triton, torch cannot run inside it
        else:
            found = _check_host_code(node)
            prior = before.get(name)
            if prior is not None:  # what the user's own version of this definition already does is not new
                have = Counter(v.message for v in _check_host_code(prior))
                kept = []
                for v in found:
                    if have[v.message] > 0:
                        have[v.message] -= 1
                    else:
                        kept.append(v)
                found = kept
            out.extend(found)
    return out


def _is_jit(node: ast.stmt) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for dec in node.decorator_list:
        text = ast.unparse(dec)
        if text.startswith(("triton.jit", "triton.autotune", "triton.heuristics", "jit")):
            return True
    return False


def _module_of(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [("." * node.level) + (node.module or "")]
    return [a.name for a in node.names]


def _check_import(node: ast.Import | ast.ImportFrom) -> list[Violation]:
    out = []
    for mod in _module_of(node):
        if mod.startswith(".") or not any(mod == m or mod.startswith(m + ".") for m in ALLOWED_MODULES):
            out.append(Violation(node.lineno, f"imports `{mod}`: only torch, triton, math and argus.knowledge.kernels may be added"))
    return out


def _check_host_code(node: ast.stmt) -> list[Violation]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import | ast.ImportFrom):
            out.extend(_check_import(sub))
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
            out.append(Violation(sub.lineno, "uses `@` (a torch matmul) outside the kernel"))
        elif isinstance(sub, ast.Call):
            out.extend(_check_call(sub))
        elif isinstance(sub, ast.Attribute):
            dotted = _dotted(sub)
            if dotted and any(dotted.startswith(f"{m}.") or dotted == m for m in FORBIDDEN_MODULES):
                out.append(Violation(sub.lineno, f"uses `{dotted}`"))
        elif isinstance(sub, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and (_dotted(t) or "").split(".")[0] in ("torch", "triton", "tl", "math", "builtins"):
                    out.append(Violation(sub.lineno, f"patches `{_dotted(t)}`"))
        elif isinstance(sub, ast.Global | ast.Nonlocal) and isinstance(node, ast.FunctionDef):
            continue
    return _dedupe(out)


def _check_call(call: ast.Call) -> list[Violation]:
    func = call.func
    dotted = _dotted(func) or ""
    if isinstance(func, ast.Name) and func.id in PATCH_CALLS:
        return [Violation(call.lineno, f"calls `{func.id}`")]
    if dotted.startswith("torch."):
        rest = dotted[len("torch."):]
        if any(rest == f or rest.endswith("." + f) for f in TORCH_FORBIDDEN_ATTRS):
            return [Violation(call.lineno, f"calls `{dotted}` (streams, graphs and compilation are not allowed)")]
        if rest.startswith("cuda.") or rest.startswith("backends."):
            return [] if rest.split(".")[-1] in TORCH_ALLOWED | {"synchronize"} else [
                Violation(call.lineno, f"calls `{dotted}`")]
        if rest.split(".")[0] not in TORCH_ALLOWED:
            return [Violation(call.lineno, f"calls `{dotted}`: torch computes outside the Triton kernel")]
        return []
    if isinstance(func, ast.Attribute) and func.attr in COMPUTE_METHODS:
        return [Violation(call.lineno, f"calls `.{func.attr}()`: a torch computation outside the Triton kernel")]
    return []


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _dedupe(items: list[Violation]) -> list[Violation]:
    seen, out = set(), []
    for v in items:
        if (v.line, v.message) not in seen:
            seen.add((v.line, v.message))
            out.append(v)
    return out
