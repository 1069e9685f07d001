"""Rewrite for the card split-k-stream-k: a third grid axis over K slices, fp32 partials added atomically.

Why: a skinny GEMM (decode-sized M, or few output tiles and a long K) launches fewer programs than the
GPU has SMs, and each walks the whole K. Cutting K into SPLIT_K slices multiplies the programs; each
adds its fp32 partial into a zeroed fp32 buffer with `tl.atomic_add`, and the launcher casts the sum
to the output dtype. Sums in another order: not bitwise deterministic (gate 2's tolerance decides).
The transformation, only where it is sound on what the code says:
- the kernel reads pid 0 and 1, starts `acc = tl.zeros(...)`, has one K loop `for k in range(0, T)`
  (or `range(T)`) over tile indices whose only changes to `acc` are `acc += ...` without `acc` on the
  right or `acc = tl.dot(x, y, acc)` (a sum over K, so slices add up), whose other loop-carried state
  is pointers advanced by `p += ...` (pre-advanced to the slice's first tile), and one final
  `tl.store(ptr, acc | acc.to(...), mask=...)` with `acc` untouched after the loop: it becomes a
  `tl.atomic_add` of `acc`; the loop runs over tiles [pid_k * per, min(pid_k * per + per, T));
- the kernel is not autotuned (its timing runs would add into the buffer: GR004);
- the launcher allocates the output as a local and launches once with a spelled-out 2-tuple grid:
  the output passed becomes a zeroed fp32 twin, the grid gets SPLIT_K as a third axis, and the output
  is the twin cast back after the launch.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from argus.agent.optimize.rewrites._edit import function, launch_calls, replace, span
from argus.agent.optimize.rewrites.pid_swizzle import _grid_tuple, _pid_assigns

CARD = "split-k-stream-k"
DESCRIPTION = "SPLIT_K slices of K on a third grid axis, fp32 atomic partial sums"
SPLITS = (4, 2)
_NEW_NAMES = ("pid_k", "k_tiles", "k_per_split", "k_first", "k_stop", "SPLIT_K")


def _is_call(node: ast.AST, dotted: str) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) == dotted


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _k_loop(kernel: ast.FunctionDef, acc: str) -> ast.For | None:
    loops = [n for n in kernel.body if isinstance(n, ast.For) and any(_is_call(s, "tl.dot") for s in ast.walk(n))]
    if len(loops) != 1:
        return None
    loop = loops[0]
    it = loop.iter
    if not (_is_call(it, "range") and isinstance(loop.target, ast.Name) and not it.keywords):
        return None
    if len(it.args) == 2 and not (isinstance(it.args[0], ast.Constant) and it.args[0].value == 0):
        return None
    if len(it.args) not in (1, 2) or loop.orelse:
        return None
    for sub in ast.walk(loop):
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == acc:
            if not isinstance(sub.op, ast.Add) or acc in _names(sub.value):
                return None
        elif isinstance(sub, ast.Assign) and acc in {t.id for t in sub.targets if isinstance(t, ast.Name)}:
            v = sub.value
            ok = _is_call(v, "tl.dot") and len(v.args) == 3 and ast.unparse(v.args[2]) == acc
            if not ok or acc in _names(v.args[0]) | _names(v.args[1]):
                return None
    return loop


def _carried(loop: ast.For, acc: str, after: list[ast.stmt]) -> list[ast.AugAssign] | None:
    """The pointer increments of the loop, or None if other loop state is read after it."""
    incs = [s for s in loop.body if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)
            and isinstance(s.op, ast.Add) and s.target.id != acc]
    stored = {n.id for s in loop.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    stored.add(loop.target.id)
    read_after = set().union(*(_names(s) for s in after)) if after else set()
    inc_names = {s.target.id for s in incs}
    if (stored - {acc} - inc_names) & read_after or any(_names(s.value) & stored for s in incs):
        return None
    return incs


def _plan(source: str, kernel_name: str, launcher_name: str):
    tree = ast.parse(source)
    kernel, launcher = function(tree, kernel_name), function(tree, launcher_name)
    if kernel is None or launcher is None or _names(kernel) & set(_NEW_NAMES):
        return None
    if any("autotune" in ast.unparse(d) for d in kernel.decorator_list):
        return None  # the autotuner's timing runs would add into the buffer too (GR004)
    pids, grid, calls = _pid_assigns(kernel), _grid_tuple(launcher, kernel_name), launch_calls(launcher, kernel_name)
    if not ({0, 1} <= set(pids) and 2 not in pids and grid is not None and len(calls) == 1):
        return None
    body = kernel.body
    last = body[-1]
    if not (isinstance(last, ast.Expr) and _is_call(last.value, "tl.store") and len(last.value.args) == 2):
        return None
    if sum(_is_call(n, "tl.store") for n in ast.walk(kernel)) != 1:
        return None
    value = last.value.args[1]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
        value = value.func.value
    if not isinstance(value, ast.Name):
        return None
    acc = value.id
    inits = [s for s in body if isinstance(s, ast.Assign) and acc in {t.id for t in s.targets if isinstance(t, ast.Name)}]
    if len(inits) != 1 or not _is_call(inits[0].value, "tl.zeros"):
        return None
    loop = _k_loop(kernel, acc)
    if loop is None or body.index(inits[0]) > body.index(loop):
        return None
    after = body[body.index(loop) + 1:]
    if any(acc in {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} for s in after):
        return None
    incs = _carried(loop, acc, after)
    out = _output(kernel, launcher, calls[0], last.value.args[0])
    if incs is None or out is None:
        return None
    return kernel, launcher, pids, grid, calls[0], loop, incs, last.value, acc, out


def _output(kernel: ast.FunctionDef, launcher: ast.FunctionDef, call: ast.Call, ptr: ast.AST) -> str | None:
    """The launcher's local tensor that the kernel stores into (found through the store's pointer)."""
    params = [a.arg for a in kernel.args.args]
    sources = _names(ptr)
    for s in kernel.body:  # one level: `c_ptrs = c_ptr + offsets` names the pointer parameter
        if isinstance(s, ast.Assign) and {t.id for t in s.targets if isinstance(t, ast.Name)} & _names(ptr):
            sources |= _names(s.value)
    hit = [i for i, p in enumerate(params) if p in sources and p.endswith("ptr") and i < len(call.args)]
    if len(hit) != 1 or not isinstance(call.args[hit[0]], ast.Name):
        return None
    name = call.args[hit[0]].id
    local = [s for s in launcher.body if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
    if len(local) != 1 or not (_is_call(local[0].value, "torch.empty") or _is_call(local[0].value, "torch.zeros")):
        return None
    if name in {a.arg for a in launcher.args.args} or f"{name}_partial" in _names(launcher):
        return None
    return name


def applies(ctx) -> bool:
    return ctx.pattern == "gemm" and _plan(ctx.source, ctx.kernel, ctx.launcher) is not None


def apply(source: str, kernel_name: str, launcher_name: str, split: int) -> str | None:
    plan = _plan(source, kernel_name, launcher_name)
    if plan is None:
        return None
    kernel, launcher, pids, grid, call, loop, incs, store, acc, out = plan
    ind = " " * loop.col_offset
    tiles = source[slice(*span(source, loop.iter.args[-1]))]
    pre = ["pid_k = tl.program_id(2)", f"k_tiles = {tiles}", "k_per_split = tl.cdiv(k_tiles, SPLIT_K)",
           "k_first = pid_k * k_per_split", "k_stop = min(k_first + k_per_split, k_tiles)"]
    pre += [f"{s.target.id} += k_first * ({source[slice(*span(source, s.value))]})" for s in incs]
    l0, _ = span(source, loop)
    i0, i1 = span(source, loop.iter)
    edits = [(l0, l0, ("\n" + ind).join(pre) + "\n" + ind), (i0, i1, "range(k_first, k_stop)")]
    s0, s1 = span(source, store.func)
    edits.append((s0, s1, "tl.atomic_add"))
    v0, v1 = span(source, store.args[1])
    edits.append((v0, v1, acc))
    # the kernel's last parameter: SPLIT_K after it
    last_arg = kernel.args.args[-1]
    a1 = span(source, last_arg)[1]
    edits.append((a1, a1, ", SPLIT_K: tl.constexpr"))
    g0, g1 = span(source, grid)
    a, b = (source[slice(*span(source, e))] for e in grid.elts)
    edits.append((g0, g1, f"({a}, {b}, {split})"))
    part = f"{out}_partial"
    for n in ast.walk(call):
        if isinstance(n, ast.Name) and n.id == out:
            n0, n1 = span(source, n)
            edits.append((n0, n1, part))
    end = max(span(source, n)[1] for n in [*call.args, *call.keywords])
    edits.append((end, end, f", SPLIT_K={split}"))
    stmt = next(s for s in launcher.body if any(n is call for n in ast.walk(s)))
    t0, t1 = span(source, stmt)
    lind = " " * stmt.col_offset
    edits.append((t0, t0, f"{part} = torch.zeros_like({out}, dtype=torch.float32)  # SPLIT_K partials add up here\n{lind}"))
    edits.append((t1, t1, f"\n{lind}{out} = {part}.to({out}.dtype)"))
    return replace(source, edits)


def variants(ctx) -> Iterator[tuple[str, str | None, tuple[str, ...]]]:
    for s in SPLITS:
        yield f"SPLIT_K={s}", apply(ctx.source, ctx.kernel, ctx.launcher, s), ()
