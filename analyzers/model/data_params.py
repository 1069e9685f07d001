"""Runtime parameters of a kernel that only data is computed from.

A launcher value the evaluator cannot compute (a random generator's seed and offset, a
`torch.finfo(...).tiny`, a scalar from `value.item()`) is given to the probes as a stand-in.
Where the kernel uses that parameter only in the values it computes (never in an address, a
mask, a branch, a loop, a tile's shape, or a call the checker does not see into), no bound,
race, coverage or undefined-lane verdict depends on its value: the probes pick it like a size
and name it in each finding's sizes (binder_state.data_pick). Any other use keeps it an AR001
stand-in.

A random function's draws do not carry their arguments' values on (model/random_draws.py):
a seed whose draws steer (flag-gems' randperm shuffle by `argsort` of random bits) is still
data-only: the interpreter's draw does not depend on it, and every seed is one a run may pass.
"""

from __future__ import annotations

import ast

from argus.analyzers.model.host_values import dotted_name
from argus.analyzers.model.random_draws import TRITON_RANDOM, Draws, closure
from argus.analyzers.model.scan import KernelScan

# calls whose every argument steers what the kernel touches or how it runs
_STEERING_CALLS = frozenset(
    {
        "arange",
        "make_block_ptr",
        "advance",
        "make_tensor_descriptor",
        "load_tensor_descriptor",
        "store_tensor_descriptor",
        "program_id",
        "num_programs",
        "zeros",
        "ones",
        "empty",
        "range",
        "static_range",
        "reshape",
        "view",
        "broadcast_to",
        "expand_dims",
        "permute",
        "trans",
        "split",
        "join",
        "multiple_of",
        "max_contiguous",
        "max_constancy",
        "static_assert",
        "device_assert",
        "assume",
        "gather",
        "histogram",
        "cumsum",
        "cumprod",
        "sort",
        "flip",
        "reduce",
        "associative_scan",
        "inline_asm_elementwise",
    }
)
# memory operations: (positions of the address and the mask), keyword `mask` too
_MEMORY_CALLS = {"load": (0, 1), "store": (0, 2)}
_TRITON_PREFIXES = ("tl.", "triton.language.", "libdevice.", "tl_math.", "math.", "triton.")

MAX_HELPER_DEPTH = 4  # helpers calling helpers followed this deep; deeper calls steer (conservative)


def data_only_params(func: ast.FunctionDef, scan: KernelScan) -> frozenset[str]:
    """The runtime scalar parameters of the kernel `func` that nothing but computed values
    derive from."""
    scalars = {
        a.arg
        for a in func.args.args + func.args.kwonlyargs
        if a.arg not in scan.pointers
        and a.arg not in scan.tiled
        and not (a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr"))
    }
    return frozenset(scalars & _DataFlow(scan.helpers).data_only(func, kernel=True, depth=0))


class _DataFlow:
    """Which parameters of a kernel or helper steer nothing (memoized per helper)."""

    def __init__(self, helpers: dict[str, ast.FunctionDef]) -> None:
        self.helpers = helpers
        self.memo: dict[str, frozenset[str]] = {}
        self.draws = Draws(helpers)

    def data_only(self, func: ast.FunctionDef, kernel: bool, depth: int) -> frozenset[str]:
        params = [a.arg for a in func.args.args + func.args.kwonlyargs]
        deps = self.draws.dependencies([func])
        steering: set[str] = set()
        for node in ast.walk(func):
            for expr in self._steering_exprs(node, kernel, depth):
                steering |= self.draws.reads(expr)
        reached = closure(steering, deps)
        return frozenset(p for p in params if p not in reached)

    def helper_data_only(self, name: str, depth: int) -> frozenset[str] | None:
        func = self.helpers.get(name)
        if func is None or depth >= MAX_HELPER_DEPTH:
            return None
        if name not in self.memo:
            self.memo[name] = frozenset()  # recursion: every parameter steers until known
            self.memo[name] = self.data_only(func, kernel=False, depth=depth + 1)
        return self.memo[name]

    def _steering_exprs(self, node: ast.AST, kernel: bool, depth: int) -> list[ast.expr]:
        """The sub-expressions of `node` that decide addresses, masks or control flow."""
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            return [node.test]
        if isinstance(node, ast.For):
            return [node.iter]
        if isinstance(node, ast.Subscript):
            return [node.slice]
        if isinstance(node, ast.Return) and node.value is not None and kernel:
            return [node.value]
        if not isinstance(node, ast.Call):
            return []
        name = dotted_name(node.func)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        last = name.rpartition(".")[2] if name else attr
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        if last.startswith("atomic_") or last in _STEERING_CALLS:
            return [*node.args, *keywords.values()]
        if last == "full":  # `tl.full(shape, value, dtype)`: the shape steers, the value is data
            return node.args[:1] + [v for k, v in keywords.items() if k == "shape"]
        if last in _MEMORY_CALLS:
            out = [node.args[i] for i in _MEMORY_CALLS[last] if i < len(node.args)]
            out += [v for k, v in keywords.items() if k in ("pointer", "mask", "boundary_check", "offsets")]
            if isinstance(node.func, ast.Attribute) and not name.startswith(_TRITON_PREFIXES):
                out += list(node.args)  # `desc.load([off_m, off_n])`: offsets
            return out
        if last in TRITON_RANDOM and last not in self.helpers:
            return []
        if name.startswith(_TRITON_PREFIXES) or (isinstance(node.func, ast.Attribute) and not name):
            return []  # arithmetic, casts, reductions of values: data
        if isinstance(node.func, ast.Attribute) and name.split(".")[0] not in self.helpers:
            return []  # a method of a tile (`x.to(tl.float32)`): data
        free = self.helper_data_only(last, depth)
        if free is None:
            return [*node.args, *keywords.values()]  # a call the checker does not see into
        helper = self.helpers[last]
        names = [a.arg for a in helper.args.args + helper.args.kwonlyargs]
        out = [a for i, a in enumerate(node.args) if i >= len(names) or names[i] not in free]
        return out + [v for k, v in keywords.items() if k not in free]
