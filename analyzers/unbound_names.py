"""A name a kernel reads that nothing binds: the kernel cannot compile, so it is not interpreted.

Triton compiles a kernel by walking its Python AST and looking every name up in the kernel's
scope and then in the module's globals and builtins; a name found nowhere raises a NameError
during that compile, so the kernel never runs and no launch of it exists whose lanes, masks or
stores could be judged. Interpreting such a kernel only re-derives findings about a program that
cannot exist, and a typed letter (`offs` becomes `offsq` while a name is being edited) would cost
the kernel's whole interpretation (hundreds of ms for a large kernel) on every keystroke.

The rule is decided on the text alone, before interpretation, and only where the text settles it:

- the name is read (`ast.Load`) in code Triton always compiles: the kernel body's statements up to
  its first top-level `return`, including `for ... in range(...)`/`tl.range(...)` and `while`
  bodies (compiled whatever their trip count), but not the branches of an `if`, the arms of a
  conditional expression, the operands after the first of `and`/`or`, nor the body of a
  `tl.static_range` loop (those may be left out of a compile by a constexpr);
- it is not bound in the kernel (parameter, assignment or any other store, loop or `with`
  target, lambda parameter, local import), by the module (any binding at module level, in any
  statement there but function and class bodies, any `global` declaration, any import), nor a
  builtin, nor one of the names the interpreter resolves itself (`tl`, `triton`, ...);
- the module has no star import and no dynamic binding of globals (`globals()`, `vars()`,
  `exec`, `setattr`, `sys.modules`, `__dict__`), and parses as a whole.

A name bound somewhere but not followed by the checker (an import from another module, a name
bound in one branch only) is never reported here: the kernel is analyzed in full as before.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from argus.analyzers.constexpr_eval import NOT_NONE, UNKNOWN, const_value
from argus.analyzers.model.nodes import subtree
from argus.analyzers.module_bindings import BINDING_TYPES, names_bound_by

_MODULE_DUNDERS = frozenset(
    {
        "__name__",
        "__file__",
        "__doc__",
        "__package__",
        "__spec__",
        "__loader__",
        "__path__",
        "__cached__",
        "__class__",
    }
)
BUILTINS = frozenset(dir(builtins)) | _MODULE_DUNDERS


def _kept_on(func: ast.FunctionDef, key: str, compute: Callable[[ast.FunctionDef], Any]) -> Any:
    """`compute(func)`, kept on the function node: the answers below depend on the syntax tree
    alone, trees are not edited after parsing (as `model/nodes.subtree` relies on), and the
    kernel's check asks them again for every launch whose constexprs differ."""
    cached = func.__dict__.get(key)
    if cached is None:
        cached = compute(func)
        setattr(func, key, cached)
    return cached


def kernel_bindings(func: ast.FunctionDef) -> frozenset[str]:
    """Every name the kernel binds anywhere in its body or signature (its parameters, any
    store, lambda parameters, local imports): a name bound in one branch only counts as bound."""
    return _kept_on(func, "_argus_kernel_bindings", _kernel_bindings)


def _kernel_bindings(func: ast.FunctionDef) -> frozenset[str]:
    """(`names_bound_by` of every node but `func`, read by node type: the two kinds nearly
    every binding is, a stored `Name` and an `arg`, without a generator per node; the other
    node types that bind go through `names_bound_by` itself.)"""
    out = {a.arg for a in subtree(func.args) if isinstance(a, ast.arg)}
    load, name_t, arg_t, other = ast.Load, ast.Name, ast.arg, BINDING_TYPES
    for node in subtree(func):  # the nodes of ast.walk(func), in its order
        t = type(node)
        if t is name_t:
            if type(node.ctx) is not load:  # type: ignore[attr-defined]
                out.add(node.id)  # type: ignore[attr-defined]
        elif t is arg_t:
            out.add(node.arg)  # type: ignore[attr-defined]
        elif t in other and node is not func:
            out.update(names_bound_by(node))
    return frozenset(out)


@dataclass(frozen=True)
class Scope:
    """What decides which code a compile reads: the kernel's names that always hold a tensor
    (`tensor_names`: an `if` on one compiles both arms), and, for one launch, the constexpr
    values it passes (`env`: an `if` on those compiles one arm; None: no launch known)."""

    tensors: frozenset[str] = frozenset()
    env: dict[str, Any] | None = None

    def test(self, e: ast.expr) -> bool | None:
        """True/False: the arm a constexpr test takes; None: both arms (a tensor test) or
        neither (not known): `arms` says which."""
        if self.env is None:
            return None
        v = const_value(e, self.env)
        return None if v is UNKNOWN else bool(v)


def compiled_reads(body: list[ast.stmt], scope: Scope) -> Iterator[ast.Name]:
    """The names read in code Triton compiles (module docstring) under `scope`."""
    for stmt in body:
        yield from _reads_of_statement(stmt, scope)
        if isinstance(stmt, ast.Return):
            return


def _arms(test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], scope: Scope) -> list[list[ast.stmt]]:
    taken = scope.test(test)
    if taken is not None:
        return [body if taken else orelse]
    return [body, orelse] if is_tensor(test, scope.tensors) else []


def _reads_of_statement(stmt: ast.stmt, scope: Scope) -> Iterator[ast.Name]:
    if isinstance(stmt, ast.If):
        yield from _reads(stmt.test, scope)
        for arm in _arms(stmt.test, stmt.body, stmt.orelse, scope):
            yield from compiled_reads(arm, scope)
    elif isinstance(stmt, ast.For):
        yield from _reads(stmt.iter, scope)
        if _always_compiled_loop(stmt.iter) or _static_range_runs(stmt.iter, scope):
            yield from compiled_reads(stmt.body, scope)
    elif isinstance(stmt, ast.While):
        yield from _reads(stmt.test, scope)
        yield from compiled_reads(stmt.body, scope)
    elif isinstance(stmt, ast.With):
        for item in stmt.items:
            yield from _reads(item.context_expr, scope)
        yield from compiled_reads(stmt.body, scope)
    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Try):
        return  # not Triton: left to the full analysis
    else:
        yield from _reads(stmt, scope)


def _always_compiled_loop(it: ast.expr) -> bool:
    """`range(...)` and `tl.range(...)`: a loop Triton emits once, whatever its trip count."""
    if not isinstance(it, ast.Call):
        return False
    f = it.func
    if isinstance(f, ast.Name):
        return f.id == "range"
    return isinstance(f, ast.Attribute) and f.attr == "range" and isinstance(f.value, ast.Name)


def _static_range_runs(it: ast.expr, scope: Scope) -> bool:
    """`tl.static_range(a, b, c)` whose bounds the launch's constexprs give and that runs once
    at least (unrolled: its body is compiled once per iteration, so at least once)."""
    if scope.env is None or not isinstance(it, ast.Call) or it.keywords:
        return False
    f = it.func
    if not (isinstance(f, ast.Attribute) and f.attr == "static_range") or not 1 <= len(it.args) <= 3:
        return False
    bounds = [const_value(a, scope.env) for a in it.args]
    if not all(type(b) is int for b in bounds) or (len(bounds) == 3 and bounds[2] == 0):
        return False
    return len(range(*bounds)) > 0


def _reads(node: ast.AST, scope: Scope = Scope()) -> Iterator[ast.Name]:
    """Names read in an expression or simple statement, skipping the arms not compiled."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                yield n
        elif isinstance(n, ast.AnnAssign):
            todo.extend(
                x for x in (n.value, n.target) if x is not None
            )  # a local's annotation is not evaluated
        elif isinstance(n, ast.IfExp):
            arms = _arms(n.test, [ast.Expr(n.body)], [ast.Expr(n.orelse)], scope)
            todo.extend([*(a[0] for a in arms), n.test])
        elif isinstance(n, ast.BoolOp):
            todo.append(n.values[0])
        elif isinstance(n, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue  # their own scopes: left to the full analysis
        else:
            todo.extend(reversed(list(ast.iter_child_nodes(n))))


#: `tl` functions whose result is a tensor whatever their arguments
_MAKES_TENSOR = frozenset(
    [
        "load",
        "program_id",
        "num_programs",
        "arange",
        "zeros",
        "full",
        "zeros_like",
        "full_like",
        "rand",
        "randn",
        "randint",
        "atomic_add",
        "atomic_max",
        "atomic_min",
        "atomic_cas",
        "atomic_xchg",
        "atomic_and",
        "atomic_or",
        "atomic_xor",
    ]
)
#: `tl` functions whose result is a tensor when one of their positional arguments is
_KEEPS_TENSOR = frozenset(
    [
        "sum",
        "max",
        "min",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "reduce",
        "exp",
        "exp2",
        "log",
        "log2",
        "sqrt",
        "rsqrt",
        "abs",
        "where",
        "maximum",
        "minimum",
        "dot",
        "sigmoid",
        "cast",
        "reshape",
        "broadcast_to",
        "trans",
        "expand_dims",
    ]
)


def is_tensor(e: ast.expr, tensors: frozenset[str]) -> bool:
    """Whether `e` is always a tensor (never a constexpr) in Triton: read from memory, a
    program id, a range, or arithmetic and comparisons with one of those."""
    if isinstance(e, ast.Name):
        return e.id in tensors
    if isinstance(e, ast.BinOp):
        return is_tensor(e.left, tensors) or is_tensor(e.right, tensors)
    if isinstance(e, ast.Compare):
        return any(is_tensor(x, tensors) for x in [e.left, *e.comparators])
    if isinstance(e, ast.UnaryOp) and not isinstance(e.op, ast.Not):
        return is_tensor(e.operand, tensors)
    if isinstance(e, ast.Subscript):
        return is_tensor(e.value, tensors)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        f = e.func
        if isinstance(f.value, ast.Name) and f.value.id == "tl":
            if f.attr in _MAKES_TENSOR:
                return True
            return f.attr in _KEEPS_TENSOR and any(is_tensor(a, tensors) for a in e.args)
        return f.attr in ("to", "reshape", "broadcast_to") and is_tensor(f.value, tensors)
    return False


def tensor_names(func: ast.FunctionDef) -> frozenset[str]:
    """The kernel's local names every binding of which is a tensor (`is_tensor`), or the
    variable of a `range`/`tl.range` loop (a value of the emitted loop); a parameter never
    counts (an integer argument of 1 or None is specialized into a constexpr)."""
    return _kept_on(func, "_argus_tensor_names", _tensor_names)


def _tensor_names(func: ast.FunctionDef) -> frozenset[str]:
    values: dict[str, list[ast.expr | None]] = {}
    seen: set[int] = set()  # target names read with their statement
    for node in subtree(func):  # the nodes of ast.walk(func), in its order
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for name, value in _paired(t, node.value):
                    seen.add(id(name))
                    values.setdefault(name.id, []).append(value)
        elif (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and _always_compiled_loop(node.iter)
        ):
            seen.add(id(node.target))
            values.setdefault(node.target.id, []).append(_A_TENSOR)
        elif id(node) not in seen:
            for name in names_bound_by(node):  # parameters, other loops, `with`, imports
                values.setdefault(name, []).append(None)
    # the greatest fixpoint: `acc = tl.zeros(...)` then `acc += x * acc` keeps `acc` a tensor
    tensors = {name for name, vs in values.items() if all(v is not None for v in vs)}
    shrunk = True
    while shrunk:
        known = frozenset(tensors)
        dropped = {name for name in known if not all(is_tensor(v, known) for v in values[name])}  # type: ignore[arg-type]
        tensors -= dropped
        shrunk = bool(dropped)
    return frozenset(tensors)


def _paired(target: ast.expr, value: ast.expr | None) -> Iterator[tuple[ast.Name, ast.expr | None]]:
    """Each name a target binds with the expression it gets (`a, b = x, y` pairs them), None
    where that is not written out."""
    if isinstance(target, ast.Name):
        yield target, value
    elif isinstance(target, ast.Tuple | ast.List):
        values = value.elts if isinstance(value, ast.Tuple | ast.List) else None
        if values is not None and len(values) != len(target.elts):
            values = None
        for i, t in enumerate(target.elts):
            yield from _paired(t, values[i] if values is not None else None)
    else:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                yield name, None


_A_TENSOR = ast.Call(ast.Attribute(ast.Name("tl"), "program_id"), [], [])


def first_unbound(
    func: ast.FunctionDef,
    known: Iterable[str],
    module: Callable[[], frozenset[str] | None],
    env: dict[str, Any] | None = None,
) -> ast.Name | None:
    """The first name read in compiled kernel code that nothing binds (module docstring), or
    None. `known`: names the caller already knows to be bound (the module's constants, imports
    and definitions it has read, the interpreter's own names); `module()` gives the module's
    bindings (None: unknown), asked only when some read is not in `known`, so a kernel that
    reads only such names costs no parse of the module. `env`: one launch's arguments
    (`launch_env`), which settle its constexpr `if`s; None: only the code every launch compiles."""
    known = known if isinstance(known, set | frozenset) else set(known)
    local = kernel_bindings(func)
    if all(n in local or n in BUILTINS or n in known for n in names_read(func)):
        return None  # every name the function reads anywhere is bound: its compiled reads are too
    found = _unbound_among(compiled_reads(func.body, Scope(tensor_names(func), env)), func, known, module)
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)


def names_read(func: ast.FunctionDef) -> frozenset[str]:
    """Every name read (`ast.Load`) anywhere under `func`: the compiled reads of any launch are
    among them (`compiled_reads` yields only `Name` nodes of the tree), so when all of these are
    bound no launch's compile reads an unbound one, and the walk per launch is not needed."""
    return _kept_on(func, "_argus_names_read", _names_read)


def _names_read(func: ast.FunctionDef) -> frozenset[str]:
    return frozenset(n.id for n in subtree(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _unbound_among(
    reads: Iterable[ast.Name], func: ast.FunctionDef, known: Iterable[str], module: Callable[[], frozenset[str] | None]
) -> list[ast.Name]:
    """The reads, in order, that neither `func`, the builtins, `known` nor the module binds;
    the module's bindings are parsed only when a read is left after the cheaper tables, and
    an unknowable module (None) leaves nothing reported."""
    local = kernel_bindings(func)
    known = set(known)
    found = [n for n in reads if n.id not in local and n.id not in BUILTINS and n.id not in known]
    if not found:
        return []
    bound = module()
    if bound is None:
        return []
    return [n for n in found if n.id not in bound]


def launch_env(args: dict[str, Any]) -> dict[str, Any]:
    """A launch's arguments as the constexpr evaluator reads them: plain values as they are, a
    tensor as NOT_NONE (settles `is None` tests only), anything else left out (not known)."""
    out: dict[str, Any] = {}
    for name, v in args.items():
        if v is None or type(v) in (bool, int, float, str):
            out[name] = v
        elif hasattr(v, "shape"):
            out[name] = NOT_NONE
    return out


def first_unbound_before_launch(
    func: ast.FunctionDef, call: ast.Call, known: Iterable[str], module: Callable[[], frozenset[str] | None]
) -> ast.Name | None:
    """The first name nothing binds that a launcher always reads before (or in) the launch
    `call`: Python raises a NameError there, so this launch never happens. Only the statements
    that run whenever the launch does are read (those before it in each block that holds it, an
    `if`'s test but not its other branch, a loop's header but not a loop before it); `func` must
    be a function of the module (no enclosing function scope)."""
    known = known if isinstance(known, set | frozenset) else set(known)
    local = kernel_bindings(func)
    if all(n in local or n in BUILTINS or n in known for n in names_read(func)):
        return None  # every name the function reads anywhere is bound: those read before the launch are too
    return next(iter(_unbound_among(_reads_before(func.body, call), func, known, module)), None)


def _holds(stmt: ast.AST, target: ast.AST) -> bool:
    lo, hi = getattr(stmt, "lineno", 0), getattr(stmt, "end_lineno", 0) or 0
    return lo <= target.lineno <= hi and any(n is target for n in ast.walk(stmt))  # type: ignore[attr-defined]


def _reads_before(body: list[ast.stmt], target: ast.Call) -> Iterator[ast.Name]:
    """Names read, in order, by the code that runs every time `target` is called."""
    for stmt in body:
        if _holds(stmt, target):
            yield from _reads_into(stmt, target)
            return
        if isinstance(stmt, ast.Return | ast.Raise):
            return
        if isinstance(stmt, ast.If | ast.While):
            yield from _reads(stmt.test)
        elif isinstance(stmt, ast.For):
            yield from _reads(stmt.iter)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                yield from _reads(item.context_expr)
        elif not isinstance(stmt, ast.Try | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _reads(stmt)  # (a `try` before the launch may catch the NameError)


def _reads_into(stmt: ast.stmt, target: ast.Call) -> Iterator[ast.Name]:
    if isinstance(stmt, ast.If):
        yield from _reads(stmt.test)
        yield from _reads_before(
            stmt.body if any(_holds(s, target) for s in stmt.body) else stmt.orelse, target
        )
    elif isinstance(stmt, ast.For | ast.While):
        yield from _reads(stmt.iter if isinstance(stmt, ast.For) else stmt.test)
        if any(_holds(s, target) for s in stmt.body):
            yield from _reads_before(stmt.body, target)
    elif isinstance(stmt, ast.With):
        for item in stmt.items:
            yield from _reads(item.context_expr)
        yield from _reads_before(stmt.body, target)
    elif isinstance(stmt, ast.Try):
        if any(_holds(s, target) for s in stmt.body):
            yield from _reads_before(stmt.body, target)
    elif not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield from _reads(target)  # the launch's own grid and arguments, evaluated before it
