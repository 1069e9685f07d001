"""Without a launch site: is the kernel elementwise, so that one size is every tensor's length?

That is the one shape in which bounds can be judged with no launch at all (`offs < n` over
tensors of n elements). Anything else addresses tensors whose extents nobody established.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.kernel import KernelModel
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.scan import KernelScan


def elementwise(kernel: KernelModel, scan: KernelScan, size: str, consts: dict[str, Any]) -> bool:
    """One tiled size, 1-D tiles over plain pointers, and that size alone bounds every access."""
    return flat_kernel(kernel) and one_size_bounds_all(kernel, scan, size, consts)


def flat_kernel(kernel: KernelModel) -> bool:
    """Only 1-D tiles over plain pointers (no 2-D indexing, dots, block pointers or
    descriptors): an elementwise kernel whose tensors are as long as its one size."""
    for n in subtree(kernel.func):
        if isinstance(n, ast.Subscript) and any(
            isinstance(x, ast.Constant) and x.value is None
            for x in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice])
        ):
            return False
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("dot", "make_block_ptr", "make_tensor_descriptor", "reshape", "view", "trans")
        ):
            return False
    return True


def one_size_bounds_all(kernel: KernelModel, scan: KernelScan, size: str, consts: dict[str, Any]) -> bool:
    """The elementwise shape, where one size is every tensor's length: `size` appears in
    comparisons only bare or shifted by a constant (`offs < n`, not `offs < n * K`), and no program-id term is scaled by
    a runtime value (`row * n_cols` addresses rows of a 2-D tensor the mask does not bound).
    Anything else has extents nobody established without a launch: bounds stay unjudged."""
    func = kernel.func
    runtime = {
        p.name
        for p in kernel.params
        if not p.constexpr and p.name not in consts and p.name not in scan.pointers
    }
    pid_names = _program_id_names(func)
    bounded: set[str] = set()  # the offsets `size` bounds (`offs` of `offs < n`)
    for n in subtree(func):
        if isinstance(n, ast.Compare) and any(size in _names_in(x) for x in [n.left, *n.comparators]):
            bounded |= set().union(*(_names_in(x) for x in [n.left, *n.comparators])) - {size}
    for n in subtree(func):
        if isinstance(n, ast.Compare):
            for side in [n.left, *n.comparators]:
                if size in _names_in(side) and not _one_size(side, size):
                    return False
        if _scaled_offsets(n, bounded):
            return False  # `offs * 2`: interleaved elements, more of them than `size`
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            a, b = _names_in(n.left), _names_in(n.right)
            pid_a = bool(a & pid_names) or _calls_program_id(n.left)
            pid_b = bool(b & pid_names) or _calls_program_id(n.right)
            if (pid_a and b & runtime) or (pid_b and a & runtime):
                return False
    return True


def _scaled_offsets(n: ast.AST, bounded: set[str]) -> bool:
    """`offs * 2` (or `2 * offs`) of offsets the size bounds: the tensor holds a multiple of
    the size (real and imaginary parts interleaved), which the kernel alone does not give."""
    if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult | ast.LShift)):
        return False
    for x, y in ((n.left, n.right), (n.right, n.left)):
        if (
            isinstance(x, ast.Name)
            and x.id in bounded
            and isinstance(y, ast.Constant)
            and type(y.value) is int
            and y.value not in (0, 1)
        ):
            return True
    return False


def _one_size(e: ast.expr, size: str) -> bool:
    """`n`, or `n` plus or minus a literal: still the one size's scale."""
    if isinstance(e, ast.Name):
        return e.id == size
    return (
        isinstance(e, ast.BinOp)
        and isinstance(e.op, ast.Add | ast.Sub)
        and (
            (_one_size(e.left, size) and isinstance(e.right, ast.Constant))
            or (isinstance(e.op, ast.Add) and isinstance(e.left, ast.Constant) and _one_size(e.right, size))
        )
    )


def _names_in(e: ast.AST) -> set[str]:
    return {n.id for n in subtree(e) if isinstance(n, ast.Name)}


def _calls_program_id(e: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "program_id"
        for n in subtree(e)
    )


def _program_id_names(func: ast.FunctionDef) -> set[str]:
    """Locals computed from `tl.program_id`, directly or through others (`row = pid // n`)."""
    assigns = [
        n
        for n in subtree(func)
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and n.value is not None
    ]
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for n in assigns:
            assert n.value is not None
            if _calls_program_id(n.value) or _names_in(n.value) & out:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                new = set().union(*(_names_in(t) for t in targets)) - out
                if new:
                    out |= new
                    changed = True
    return out
