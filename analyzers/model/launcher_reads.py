"""What a launcher's text says about its tensor parameters before it is evaluated: which host
names it reads the shape or the strides of, and the rank each parameter's uses imply
(`M, K = a.shape`, `a.shape[2]`, `a.stride(1)`, `a.shape == (B, H, D)`, `a.shape == b.shape`)."""

from __future__ import annotations

import ast

from argus.analyzers.model.host_caller_args import caller_input_names
from argus.analyzers.model.host_functions import called_names
from argus.analyzers.model.host_tensor_ops import TORCH_FUNCTION_FORMS
from argus.analyzers.model.host_values import dotted_name
from argus.analyzers.model.launcher_shapes import (
    param_shape,
    rank_from_slice,
    shape_aliases,
    shape_slice,
    whole_shape,
)
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import stored_names, subtree
from argus.analyzers.model.rank_asserts import asserted_ranks

# attributes and methods that only a tensor has: a parameter using one is a tensor (rank >= 1)
TENSOR_USES = (
    "shape",
    "stride",
    "numel",
    "dtype",
    "device",
    "is_contiguous",
    "T",
    "t",
    "size",
    "contiguous",
    "view",
    "reshape",
    "transpose",
    "permute",
    "element_size",
    "is_cuda",  # `if not (input.is_cuda and target.is_cuda): raise` (flag-gems' huber_loss)
    "to",  # `target.to(result_dtype)`
)


def shape_read_names(func: ast.FunctionDef) -> set[str]:
    """Host names whose `.shape`, `.size()`, `.dim()`/`.ndim` or `.numel()` the launcher reads
    (once per launcher tree: node_memo.py)."""
    return set(on_node(func, "shape_read_names", lambda: _shape_read_names(func)))


def _shape_read_names(func: ast.FunctionDef) -> set[str]:
    out: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            if n.attr in ("shape", "size", "dim", "ndim", "numel"):
                out.add(n.value.id)
    return out


def tensor_param_ranks(
    func: ast.FunctionDef,
    back_only: set[str] | None = None,
    bounded_below: set[str] | None = None,
    rows_kept: set[str] | None = None,
) -> dict[str, int]:
    """`_tensor_param_ranks`, once per launcher tree (node_memo.py: every kernel the launcher
    launches asks); what it adds to `back_only`, `bounded_below` and `rows_kept` depends on
    `func` alone."""

    def compute() -> tuple[dict[str, int], set[str], set[str], set[str]]:
        back: set[str] = set()
        below: set[str] = set()
        kept: set[str] = set()
        return _tensor_param_ranks(func, back, below, kept), back, below, kept

    ranks, back, below, kept = on_node(func, "tensor_param_ranks", compute)
    if back_only is not None:
        back_only |= back
    if bounded_below is not None:
        bounded_below |= below
    if rows_kept is not None:
        rows_kept |= kept
    return dict(ranks)


def _tensor_param_ranks(
    func: ast.FunctionDef, back_only: set[str], bounded_below: set[str], rows_kept: set[str] | None = None
) -> dict[str, int]:
    """Host parameters used as tensors, with the rank their use implies. Each node of the
    launcher may raise a parameter's rank (never lower it); parameters whose shapes are
    compared equal share the larger rank. `back_only` collects the parameters whose only
    rank evidence is an index from the back (`v.shape[-1]`): their rank is unknown."""
    names = {a.arg for a in func.args.args + func.args.kwonlyargs} | set(saved_tensor_names(func))
    names |= caller_input_names(func)  # `x = args[0]` of a `*args` launcher (host_caller_args.py)
    ranks: dict[str, int] = {}  # from unpacking and comparisons: the whole shape is written out
    front: dict[str, int] = {}  # dimensions counted from the front (`x.shape[2]`: 3)
    back: dict[str, int] = {}  # dimensions counted from the back (`x.shape[-1]`: 1)
    used: set[str] = set()
    same: list[tuple[str, str]] = []
    aliases = shape_aliases(func, names)
    looped = _loop_aliases(func, names)  # `for grad in (dx, dw):` reads dx and dw as `grad`
    looped += _plain_aliases(func, names)  # `x = input`: x's uses are input's
    names = names | {t for t, _ in looped}
    same.extend(looped)
    for n in subtree(func):
        _rank_from_unpacking(n, names, ranks, front, back, aliases)
        _rank_from_index(n, names, front, back)
        _rank_from_use(n, names, used)
        if isinstance(n, ast.Compare) and all(isinstance(o, ast.Eq) for o in n.ops):
            _ranks_from_equal_shapes(n, names, ranks, same)
    for name, rank in asserted_ranks(func, names).items():  # `assert x.ndim == 4` (rank_asserts.py)
        ranks[name] = max(ranks.get(name, 0), rank)
    if back_only is not None:
        # `assert k.shape == q.shape` gives k the rank of q
        related = {name for pair in same for name in pair} | set(front) | set(ranks) | _reshaped(func)
        back_only |= {name for name in back if name not in related}
        # `q.new_empty(*q.shape)`: the shape is read but never counted or indexed
        back_only |= {n for n in _shape_passed_on(func) & used if n not in related | back.keys()}
        # `dh0 = torch.empty_like(h0)` of an `h0` the launcher never measures: rank unknown
        # (one whose `numel()` the launcher reads has its extent established: a flat kernel)
        # (`out = torch.empty_like(x); n = out.numel()` measures x through its copy)
        measured = related | back.keys() | _shape_passed_on(func) | _numel_read(func)
        copies = _like_copies(func)
        measured |= {src for dst, src in copies if dst in measured}
        likes = {src for _, src in copies} | {name for m in subtree(func) for name in _like_source(m)}
        back_only |= {n for n in likes & used if n not in measured}
    if bounded_below is not None:
        # `HQ = q.shape[2]` alone: q has at least 3 dimensions, maybe more
        related = {name for pair in same for name in pair} | set(ranks) | _reshaped(func)
        # (`M, N = x.shape[0], x.shape[1]` names every dimension up to the last one read:
        # taken as the rank; `q.shape[2]` alone skips two it says nothing of)
        seen = _front_indices(func, names)
        bounded_below |= {
            name for name in front if name not in related and seen.get(name) != set(range(front[name]))
        }
        # a saved tensor read as `exp_buf.size(0)` alone: nothing says it has no more
        # dimensions (liger's `[BT, V]` buffer of the forward); only a written-out shape does
        written = {name for pair in same for name in pair} | set(ranks)
        bounded_below |= {name for name in saved_tensor_names(func) if name in front and name not in written}
        # `x.shape[1]` and `x.shape[-1]` with the shape never written out: one dimension or
        # two, the code does not say (the rank taken below, counting them apart, is a guess;
        # flag-gems' per_token_group_quant_fp8 reads both of a 2-D `x`)
        bounded_below |= {name for name in front if name in back and name not in related}
        # `N = x.shape[0]` alone counts x's rows, not its dimensions: fla's `initial_state`
        # (N, D, W) and the Ascend layernorm's `x` (T, D) are read only so (a `numel()` read
        # establishes the extent, a written-out shape the rank, and a row count the launch
        # passes to the kernel measures x there: `rows < n_rows` of a 1-D `rstd`)
        measured = related | _numel_read(func)
        rows_only = {name for name in front if front[name] == 1 and name not in back and name not in measured}
        passed = _rows_passed(func)
        bounded_below |= rows_only - passed
        if rows_kept is not None:
            rows_kept |= rows_only & passed  # (the binder asks which kernel parameter gets the count)
    for name in sorted(used | set(front) | set(back) | set(ranks)):
        ranks[name] = max(ranks.get(name, 1 if name in used else 0), _indexed_rank(name, ranks, front, back))
    for _ in range(3):
        for a, b in same:
            r = max(ranks.get(a, 0), ranks.get(b, 0))
            if r:
                ranks[a] = ranks[b] = r
    return ranks


def _rows_passed(func: ast.FunctionDef) -> set[str]:
    """Names whose `x.shape[0]` (`x.size(0)`) a kernel launch (`k[grid](...)`) receives as an
    argument, written there or through a name assigned from it (`n_rows = x.shape[0]`)."""
    out: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
            for _slot, names in _row_slots(func, n):
                out |= names
    return out


def rows_arguments(func: ast.FunctionDef, call: ast.Call) -> dict[str, list[int | str]]:
    """For one launch `call` in `func`: tensor name -> the arguments (positions, keyword names)
    that carry its `x.shape[0]`, written there or through a name assigned from it."""
    out: dict[str, list[int | str]] = {}
    for slot, names in _row_slots(func, call):
        if slot is None:
            continue  # a `**mapping`: no parameter to name
        for name in names:
            out.setdefault(name, []).append(slot)
    return out


def _row_slots(func: ast.FunctionDef, call: ast.Call) -> list[tuple[int | str | None, set[str]]]:
    """Each argument of `call` (its position, keyword, or None for `**m`) with the tensors
    whose row count it carries."""
    assigned = on_node(func, "row_counts_assigned", lambda: _row_counts_assigned(func))
    slots: list[tuple[int | str | None, ast.expr]] = [*enumerate(call.args)]
    slots += [(k.arg, k.value) for k in call.keywords]
    return [
        (slot, _rows_read(a) | {r for m in ast.walk(a) if isinstance(m, ast.Name) for r in assigned.get(m.id, ())})
        for slot, a in slots
    ]


def _row_counts_assigned(func: ast.FunctionDef) -> dict[str, set[str]]:
    """Local name -> the tensors whose row count is assigned to it (`n_rows = x.shape[0]`)."""
    assigned: dict[str, set[str]] = {}
    for n in subtree(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            assigned.setdefault(n.targets[0].id, set()).update(_rows_read(n.value))
    return assigned


def _rows_read(e: ast.AST) -> set[str]:
    """The names `x` of the `x.shape[0]` and `x.size(0)` inside `e`."""
    out: set[str] = set()
    for n in ast.walk(e):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            base, index = n.value.value, n.slice
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "size" and n.args:
            base, index = n.func.value, n.args[0]
        else:
            continue
        if isinstance(base, ast.Name) and isinstance(index, ast.Constant) and index.value == 0:
            out.add(base.id)
    return out


def _loop_aliases(func: ast.FunctionDef, names: set[str]) -> list[tuple[str, str]]:
    """(loop variable, parameter) of `for t in (a, b):` over parameters only, the variable
    assigned nowhere else: each use of `t` is a use of every one of them (fla's
    `for grad in (dx, dw): N, H = grad.shape`)."""
    out: list[tuple[str, str]] = []
    stored: dict[str, int] = {}
    for n in subtree(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored[n.id] = stored.get(n.id, 0) + 1
    for n in subtree(func):
        if not (isinstance(n, ast.For) and isinstance(n.target, ast.Name) and isinstance(n.iter, ast.Tuple | ast.List)):
            continue
        items = n.iter.elts
        if items and all(isinstance(e, ast.Name) and e.id in names for e in items) and stored[n.target.id] == 1:
            out += [(n.target.id, e.id) for e in items if isinstance(e, ast.Name)]
    return out


def _plain_aliases(func: ast.FunctionDef, names: set[str]) -> list[tuple[str, str]]:
    """(alias, parameter) of `x = input`, the alias assigned nowhere else and the parameter
    never reassigned: each use of `x` is a use of the parameter (flag-gems' `floor_(input)`
    measures only `x`)."""
    stored: dict[str, int] = {}
    for n in subtree(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored[n.id] = stored.get(n.id, 0) + 1
    out: list[tuple[str, str]] = []
    for n in subtree(func):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Name)
            and n.value.id in names
            and n.value.id not in stored
            and stored.get(n.targets[0].id) == 1
            and n.targets[0].id not in names
        ):
            out.append((n.targets[0].id, n.value.id))
    return out


def saved_tensor_names(func: ast.FunctionDef) -> list[str]:
    """`q, k, v = ctx.saved_tensors` in an autograd `backward`: the tensors the forward saved,
    which the launcher knows no more about than about its parameters (their ranks come from
    their uses, their sizes are the problem's)."""
    out: list[str] = []
    for n in subtree(func):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Tuple | ast.List)
            and isinstance(n.value, ast.Attribute)
            and n.value.attr == "saved_tensors"
        ):
            out += [t.id for t in n.targets[0].elts if isinstance(t, ast.Name) and t.id not in out]
    return out


def _like_copies(func: ast.FunctionDef) -> list[tuple[str, str]]:
    """(copy, source) of `copy = torch.empty_like(source)` assignments."""
    out = []
    for n in subtree(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            out += [(n.targets[0].id, src) for src in _like_source(n.value)]
    return out


def _numel_read(func: ast.FunctionDef) -> set[str]:
    """Names whose `.numel()` the launcher reads."""
    return {
        n.func.value.id
        for n in subtree(func)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "numel"
        and isinstance(n.func.value, ast.Name)
    }


def _front_indices(func: ast.FunctionDef, names: set[str]) -> dict[str, set[int]]:
    """The non-negative indices read of each parameter's shape (`x.shape[i]`, `x.size(i)`)."""
    out: dict[str, set[int]] = {}
    for n in subtree(func):
        front: dict[str, int] = {}
        _rank_from_index(n, names, front, {})
        for name, rank in front.items():
            out.setdefault(name, set()).add(rank - 1)
    return out


def _reshaped(func: ast.FunctionDef) -> set[str]:
    """Names the launcher views in a shape it writes out (`x.reshape(-1, N)`): its extent is
    the product of the new shape, whatever its own rank."""
    return {
        n.func.value.id
        for n in subtree(func)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("reshape", "view", "flatten")
        and isinstance(n.func.value, ast.Name)
    }


def _shape_passed_on(func: ast.FunctionDef) -> set[str]:
    """Names whose `.shape` the launcher reads (spread, passed on or indexed)."""
    return {
        n.value.id
        for n in subtree(func)
        if isinstance(n, ast.Attribute) and n.attr == "shape" and isinstance(n.value, ast.Name)
    }


def _indexed_rank(name: str, ranks: dict[str, int], front: dict[str, int], back: dict[str, int]) -> int:
    """The rank the indices of `name` need. Where the launcher never writes the whole shape
    out, `x.shape[2]` and `x.shape[-1]` are taken as different dimensions (a rank of 4, not
    3): a launcher names one dimension one way, and taking them as one would invent an
    equality of two sizes that the code does not state."""
    f, b = front.get(name, 0), back.get(name, 0)
    if name in ranks or not (f and b):
        return max(f, b)
    return f + b


def _rank_from_unpacking(
    n: ast.AST,
    names: set[str],
    ranks: dict[str, int],
    front: dict[str, int],
    back: dict[str, int],
    aliases: dict[str, str],
) -> None:
    """`M, K = a.shape`: exactly as many dimensions as names (at least); `T, D, G = *x.shape, g`:
    as many as the names the spread fills; a slice of the shape unpacked (`H, D = u.shape[2:]`,
    `B, S = x.shape[:2]`, `*do.shape[-2:]`) as `rank_from_slice` says; a name the shape was
    stored in (`ctx.input_shape = x.shape`, `shape_aliases`) as the shape itself."""
    if not (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple)):
        return
    names_on_left = len(n.targets[0].elts)
    base = param_shape(n.value, names) or whole_shape(n.value, names) or aliases.get(dotted_name(n.value))
    if base is not None:
        ranks[base] = max(ranks.get(base, 0), names_on_left)
    elif (sliced := shape_slice(n.value, names)) is not None:
        rank_from_slice(sliced, names_on_left, ranks, front, back)
    elif isinstance(n.value, ast.Tuple) and not any(isinstance(t, ast.Starred) for t in n.targets[0].elts):
        spreads = [x for x in n.value.elts if isinstance(x, ast.Starred)]
        filled = names_on_left - (len(n.value.elts) - 1)
        if len(spreads) != 1 or filled <= 0:
            return
        base = param_shape(spreads[0].value, names)
        if base is not None:
            ranks[base] = max(ranks.get(base, 0), filled)
        elif (sliced := shape_slice(spreads[0].value, names)) is not None:
            rank_from_slice(sliced, filled, ranks, front, back)


def _rank_from_index(n: ast.AST, names: set[str], front: dict[str, int], back: dict[str, int]) -> None:
    """`a.shape[2]`, `a.stride(1)`, `a.size(-3)`: a dimension of that index exists. (An item of
    a stored shape, `shape = x.shape; b = shape[0]`, is not counted: a version that counted it
    bound liger's `group_norm_backward`, whose `dY` the code says may be 4-D, as 2-D, and 4
    false errors followed; see docs/realworld.md, branch `hostc5`.)"""
    base: ast.expr | None = None
    index: ast.expr | None = None
    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
        base, index = n.value.value, n.slice
    elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("stride", "size"):
        base, index = n.func.value, n.args[0] if n.args else None
    if not (isinstance(base, ast.Name) and base.id in names):
        return
    if (
        isinstance(index, ast.UnaryOp)
        and isinstance(index.op, ast.USub)
        and isinstance(index.operand, ast.Constant)
    ):
        index = ast.Constant(-index.operand.value) if isinstance(index.operand.value, int) else None
    if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
        i = index.value
        if i >= 0:
            front[base.id] = max(front.get(base.id, 0), i + 1)
        else:
            back[base.id] = max(back.get(base.id, 0), -i)


def _rank_from_use(n: ast.AST, names: set[str], used: set[str]) -> None:
    """`a.dtype`, `a.contiguous()`, `torch.empty_like(a)`: a tensor, of at least one dimension."""
    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names:
        if n.attr in TENSOR_USES:
            used.add(n.value.id)
    used |= _like_source(n) & names
    used |= _torch_operands(n) & names


def _torch_operands(n: ast.AST) -> set[str]:
    """`torch.movedim(x, d, -1)`, `torch.sum(x, 1)`: the name a torch function takes as its tensor
    (the first argument)."""
    if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args):
        return set()
    if not (isinstance(n.func.value, ast.Name) and n.func.value.id == "torch"):
        return set()
    if n.func.attr in TORCH_FUNCTION_FORMS or n.func.attr in ("movedim", "moveaxis"):
        return {n.args[0].id} if isinstance(n.args[0], ast.Name) else set()
    return set()


def _like_source(n: ast.AST) -> set[str]:
    """`torch.empty_like(a, ...)`, `torch.empty_like(a[..., 0])` (and zeros_/ones_/full_/
    randn_like): {"a"}."""
    if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_like")):
        return set()
    src = n.args[0] if n.args else None
    if isinstance(src, ast.Subscript):
        src = src.value
    return {src.id} if isinstance(src, ast.Name) else set()


def _ranks_from_equal_shapes(
    n: ast.Compare, names: set[str], ranks: dict[str, int], same: list[tuple[str, str]]
) -> None:
    """`x.shape == (a, b, c)` fixes the rank; `x.shape == y.shape` makes two ranks one.
    Chained comparisons pair up neighbours."""
    operands = [n.left, *n.comparators]
    for lhs, rhs in zip(operands, operands[1:], strict=False):
        for sh, lit in ((lhs, rhs), (rhs, lhs)):
            base = param_shape(sh, names)
            if base is not None and isinstance(lit, ast.Tuple):
                ranks[base] = max(ranks.get(base, 0), len(lit.elts))
        if (
            isinstance(lhs, ast.Attribute)
            and lhs.attr == "shape"
            and isinstance(rhs, ast.Attribute)
            and rhs.attr == "shape"
            and isinstance(lhs.value, ast.Name)
            and isinstance(rhs.value, ast.Name)
        ):
            same.append((lhs.value.id, rhs.value.id))


def unguarded_tensor_uses(func: ast.FunctionDef) -> set[str]:
    """`_unguarded_tensor_uses`, once per launcher tree (node_memo.py)."""
    return set(on_node(func, "unguarded_tensor_uses", lambda: _unguarded_tensor_uses(func)))


def _unguarded_tensor_uses(func: ast.FunctionDef) -> set[str]:
    """Parameters the launcher uses as tensors (`beta.shape[2]`, `x.stride(0)`) outside any
    test that mentions them (`if beta is not None:`, `x if x is not None else y`, `a and
    a.shape`): a `None` default cannot be what such a launch passes (the use would raise), so
    the parameter is a tensor there."""
    names = {a.arg for a in func.args.args + func.args.kwonlyargs} | caller_input_names(func)
    out: set[str] = set()

    def visit(n: ast.AST, guarded: frozenset[str]) -> None:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            if n.value.id in names and n.value.id not in guarded and n.attr in TENSOR_USES:
                out.add(n.value.id)
        tested: set[str] = set()
        if isinstance(n, ast.If | ast.IfExp | ast.While):
            tested = {m.id for m in ast.walk(n.test) if isinstance(m, ast.Name)}
        elif isinstance(n, ast.BoolOp):
            tested = {m.id for m in ast.walk(n) if isinstance(m, ast.Name)}
        inner = guarded | tested
        for child in ast.iter_child_nodes(n):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue  # a nested function may never run
            visit(child, inner)

    for st in func.body:
        visit(st, frozenset())
    # `if out is None: out = torch.empty(...)`: a name the launcher binds again may be None
    rebound = on_node(func, "stored_names", lambda: frozenset(stored_names([func])))
    return out - rebound


def ranks_through_calls(
    func: ast.FunctionDef, functions: dict[str, object], back_only: set[str]
) -> dict[str, int]:
    """`_ranks_through_calls`, once per launcher tree and the trees of the functions it calls
    by name (node_memo.py): all it reads of the table, which is made again in every check while
    an unchanged function keeps its tree."""

    def compute() -> tuple[dict[str, int], set[str]]:
        back: set[str] = set()
        return _ranks_through_calls(func, functions, back), back

    callees = [getattr(functions.get(name), "node", None) for name in _called_by_name(func)]
    ranks, back = on_node(func, "ranks_through_calls", compute, *callees)
    back_only |= back
    return dict(ranks)


def _called_by_name(func: ast.FunctionDef) -> tuple[str, ...]:
    """The plain names `func` calls (not `m.f`), as host_functions reads them."""
    return on_node(func, "called_by_name", lambda: tuple(sorted(n for n in called_names([func]) if "." not in n)))


def _ranks_through_calls(
    func: ast.FunctionDef, functions: dict[str, object], back_only: set[str]
) -> dict[str, int]:
    """Launcher parameters that the launcher only hands to a host function of its module
    (`delta = bwd_preprocess(o, do)`), with the rank that function's own uses imply; those
    whose rank it does not give either go to `back_only` (their extent is unknown)."""
    names = {a.arg for a in func.args.args + func.args.kwonlyargs} | caller_input_names(func)
    out: dict[str, int] = {}
    for n in subtree(func):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            continue
        callee = getattr(functions.get(n.func.id), "node", None)
        if not isinstance(callee, ast.FunctionDef):
            continue
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        passed = [(p, a) for p, a in zip(params, n.args, strict=False)]
        passed += [(k.arg, k.value) for k in n.keywords if k.arg]
        unknown: set[str] = set()
        ranks = tensor_param_ranks(callee, unknown)
        for p, a in passed:
            if isinstance(a, ast.Name) and a.id in names and p in ranks:
                out[a.id] = max(out.get(a.id, 0), ranks[p])
                if p in unknown:
                    back_only.add(a.id)
    return out
