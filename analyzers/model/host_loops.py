"""Iteration in host code: comprehensions, `map`, and loops and undecided branches of the
launcher's own body (model/host_invoke.py does the same inside called functions).

A loop over values the evaluator knows (`for i in range(x.ndim)`, `for t in (q, k, v)`) is run
item by item, within a budget of iterations per evaluation; a comprehension the same way. A loop
over values it does not know (`for d in dims` of a `dims` the launcher is given), or one that
leaves early (`break`, `return`), makes every name it assigns unknown afterwards, never the
value from before the loop: `N = 1; for i in dims: N *= shape[i]` leaves `N` unknown, not 1.
An `if` whose test is unknown runs both sides; a name the two sides leave equal keeps that
value, any other is unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.host_sequences import LIST_METHODS
from argus.analyzers.model.host_values import HostTensor, KnownTruth, Opaque, SymInt, dotted_name

MAX_ITEMS = 64  # items of one loop or comprehension that are followed one by one
MAX_STEPS = 2048  # loop iterations per evaluation of a launcher (nested loops included)
SEARCHED = "search loop"  # what a name a search over known items leaves unknown is


class HostLoops:
    """Mixin of HostEval (which provides `expr`, `assign`, `stmt`, `env`)."""

    env: dict[str, Any]
    storages: int
    loop_steps_left: int = MAX_STEPS
    # > 0 while a side of an undecided `if` runs: its asserts relate nothing (it may not run)
    undecided_depth: int = 0

    # ---- comprehensions and map ------------------------------------------------------------
    def e_ListComp(self, e: ast.ListComp) -> Any:
        return self._comprehension(e)

    def e_GeneratorExp(self, e: ast.GeneratorExp) -> Any:
        out = self._comprehension(e)
        return tuple(out) if isinstance(out, list) else out

    def _comprehension(self, e: ast.ListComp | ast.GeneratorExp) -> list[Any] | Opaque:
        if len(e.generators) != 1 or e.generators[0].is_async:
            return Opaque("comprehension")
        gen = e.generators[0]
        items = self.known_items(self.expr(gen.iter))  # type: ignore[attr-defined]
        if items is None:
            return Opaque("comprehension")
        names = _target_names(gen.target)
        saved = {n: self.env[n] for n in names if n in self.env}
        out: list[Any] = []
        try:
            for item in items:
                self.assign(gen.target, item)  # type: ignore[attr-defined]
                tests = [self.expr(c) for c in gen.ifs]  # type: ignore[attr-defined]
                if any(isinstance(t, Opaque) for t in tests):
                    return Opaque("comprehension")
                if all(tests):
                    out.append(self.expr(e.elt))  # type: ignore[attr-defined]
        finally:
            for n in names:
                self.env.pop(n, None)
            self.env.update(saved)
        return out

    def known_items(self, it: Any) -> list[Any] | None:
        """The items of a sequence the evaluator knows, at most MAX_ITEMS of them."""
        if isinstance(it, range) and len(it) <= MAX_ITEMS:
            return list(it)
        if isinstance(it, tuple | list) and len(it) <= MAX_ITEMS:
            return list(it)
        return None

    def sequence_call(self, fname: str, args: list[Any]) -> Any:
        """`range`, `enumerate`, `zip`, `reversed` over what the evaluator knows (None: not one
        of these). A `range` of a problem size (`range(n)` of `n = x.shape[0]`) is not
        followed: how many items it has is the probe's choice, not the code's."""
        if fname == "range" and 1 <= len(args) <= 3 and all(_plain_int(a) for a in args):
            try:
                r = range(*args)
            except ValueError:
                return Opaque("range")
            return r if len(r) <= MAX_ITEMS else Opaque("range")
        if fname in ("functools.reduce", "reduce") and len(args) in (2, 3):
            return self.folded(args[0], args[1], args[2:])
        if fname in ("enumerate", "zip", "reversed") and args:
            lists = [self.known_items(a) for a in args]
            if any(x is None for x in lists):
                return Opaque(fname)
            if fname == "enumerate":
                return list(enumerate(lists[0])) if len(args) == 1 else Opaque(fname)  # type: ignore[arg-type]
            if fname == "reversed":
                return list(reversed(lists[0])) if len(args) == 1 else Opaque(fname)  # type: ignore[arg-type]
            return list(zip(*lists, strict=False))  # type: ignore[misc]
        return None

    def folded(self, fn: Any, seq: Any, initial: list[Any]) -> Any:
        """`functools.reduce(operator.mul, shape, 1)` (flag-gems' `volume`), or with a lambda,
        over a sequence the evaluator knows, as Python folds it: left to right, from `initial`
        when given (an empty sequence without one raises, so its value is unknown). Sizes
        multiplied keep their dimension classes, as `math.prod` does."""
        items = self.known_items(seq)
        if items is None or (not items and not initial):
            return Opaque("functools.reduce")
        op = _FOLD_OPS.get(fn.what.rpartition(".")[2]) if isinstance(fn, Opaque) else None
        if op is None and not (isinstance(fn, tuple) and len(fn) == 3 and fn[0] == "lambda"):
            return Opaque("functools.reduce")
        acc, rest = (initial[0], items) if initial else (items[0], items[1:])
        for item in rest:
            acc = self.binop(op, acc, item) if op is not None else self.apply_lambda(fn, [acc, item])  # type: ignore[attr-defined]
            if isinstance(acc, Opaque):
                return acc
        return acc

    def type_test(self, args: list[Any]) -> Any:
        """`isinstance(v, int)` of a value whose kind the evaluator knows: a launcher argument
        bound as a size is an int (the binder's own reading of it), a host tensor a Tensor."""
        if len(args) != 2 or isinstance(args[0], Opaque):
            return Opaque("isinstance")
        kinds = args[1] if isinstance(args[1], tuple) else (args[1],)
        names = [k.what.rpartition(".")[2] for k in kinds if isinstance(k, Opaque)]
        if len(names) != len(kinds) or not set(names) <= set(_KINDS):
            return Opaque("isinstance")
        v = args[0]
        return any(_KINDS[n](v) for n in names)

    def apply_lambda(self, fn: Any, args: list[Any]) -> Any:
        """`(lambda x: x.contiguous())(t)`: its body with its parameters bound."""
        if not (isinstance(fn, tuple) and len(fn) == 3 and fn[0] == "lambda"):
            return Opaque("call")
        node: ast.Lambda = fn[1]
        params = node.args.args
        if len(params) != len(args) or node.args.vararg or node.args.kwonlyargs:
            return Opaque("lambda")
        saved = self.env
        self.env = {**fn[2], **{p.arg: a for p, a in zip(params, args, strict=True)}}
        try:
            return self.expr(node.body)  # type: ignore[attr-defined]
        finally:
            self.env = saved

    def mapped(self, fn: Any, seqs: list[Any]) -> Any:
        """`map(lambda x: x.contiguous(), [q, k])`: the lambda over known items (a tuple)."""
        lists = [self.known_items(s) for s in seqs]
        if not lists or any(x is None for x in lists):
            return Opaque("map")
        return tuple(self.apply_lambda(fn, list(items)) for items in zip(*lists, strict=False))  # type: ignore[arg-type]

    def either_tensor(self, a: Any, b: Any) -> Any:
        """`buf = x if contiguous else x.contiguous()` written as an `if`: two tensors of one
        shape (the same dimension classes) are a tensor of that shape whichever side ran; where
        their layouts differ its extent is not judged (which layout the kernel sees is not
        known), and where their storages differ it is a storage of its own (aliasing either
        side is not known). Anything else the two sides leave different is unknown."""
        if not (isinstance(a, HostTensor) and isinstance(b, HostTensor)):
            return self._either_helpers(a, b)
        if (a.shape, a.symbols, a.dtype) != (b.shape, b.symbols, b.dtype):
            return Opaque("branch")
        out = a.view_of(list(a.shape), list(a.strides), list(a.symbols))
        out.sized = a.sized and b.sized and a.strides == b.strides
        out.created = a.created and b.created
        if a.storage != b.storage:
            self.storages += 1
            out.storage = self.storages
        return out


    def _either_helpers(self, a: Any, b: Any) -> Opaque:
        """`BLOCK = tiles[0][0]` of a helper's unknown result on one side, a fallback number
        on the other (`else: BLOCK = 2048`): some value the helper's side or the code gives,
        which one depends on the helper; named after the helper, so that a tile size is a
        named pick (helper_picks.py) as the helper's own value is. Anything else: unknown."""
        helpers = {x.what for x in (a, b) if type(x) is Opaque and self.callee(x.what) is not None}  # type: ignore[attr-defined]
        numbers = [x for x in (a, b) if isinstance(x, int) and not isinstance(x, bool)]
        if len(helpers) == 1 and (len(numbers) == 1 or _both_opaque(a, b)):
            return Opaque(helpers.pop())
        return Opaque("branch")

    # ---- the launcher's own loops and branches ---------------------------------------------
    def run_loop(self, st: ast.For | ast.While) -> None:
        """A loop of the launcher's body that does not hold the launch."""
        if isinstance(st, ast.While) and not _leaves_early(st.body):
            self._run_while(st)
            return
        items = self.known_items(self.expr(st.iter)) if isinstance(st, ast.For) else None  # type: ignore[attr-defined]
        if items is None or _leaves_early(st.body) or len(items) > self.loop_steps_left:
            # a search over known items that stops early (`for bn in [128, 64]: if ...: break`)
            # ends on one of them where tests not decided here say: SEARCHED, not a size
            what = SEARCHED if items is not None and _leaves_early(st.body) else "loop"
            self.forget(st.body + st.orelse + ([st.target] if isinstance(st, ast.For) else []), what)
            return
        for item in items:
            self.loop_steps_left -= 1
            self.assign(st.target, item)  # type: ignore[attr-defined]
            for s in st.body:
                self.stmt(s)  # type: ignore[attr-defined]
        for s in st.orelse:
            self.stmt(s)  # type: ignore[attr-defined]

    def _run_while(self, st: ast.While) -> None:
        """A `while` whose test is decided at every step (`while temp > 1: temp >>= 1` of a
        probe's concrete size: torchao's `_get_log2_d`) runs step by step within the budget;
        one whose test is not decided, or that runs past the budget, leaves every name it
        assigns unknown, as a loop over unknown items does."""
        while True:
            c = self.expr(st.test)  # type: ignore[attr-defined]
            if isinstance(c, KnownTruth):
                c = c.truth
            if not _decided(c) or self.loop_steps_left <= 0:
                self.forget(st.body + st.orelse)
                return
            if not c:
                break
            self.loop_steps_left -= 1
            for s in st.body:
                self.stmt(s)  # type: ignore[attr-defined]
        for s in st.orelse:
            self.stmt(s)  # type: ignore[attr-defined]

    def forget(self, nodes: list[Any], what: str = "loop") -> None:
        for n in _stored(nodes):
            self.env[n] = Opaque(what)

    def join_branches(self, st: ast.If) -> None:
        """Both sides of an `if` whose test is unknown; names they leave different are unknown."""
        before = dict(self.env)
        sides = []
        self.undecided_depth += 1
        try:
            for side in (st.body, st.orelse):
                self.env = dict(before)
                for s in side:
                    self.stmt(s)  # type: ignore[attr-defined]
                sides.append(self.env)
        finally:
            self.undecided_depth -= 1
            self.env = before
        for n in _stored([*st.body, *st.orelse]):
            a, b = sides[0].get(n, _MISSING), sides[1].get(n, _MISSING)
            self.env[n] = a if _same(a, b) else self.either_tensor(a, b)


_MISSING = object()
# the `operator` functions a fold applies (`functools.reduce(operator.mul, ...)`, `from operator import mul`)
_FOLD_OPS: dict[str, ast.operator] = {"mul": ast.Mult(), "add": ast.Add(), "floordiv": ast.FloorDiv()}

_KINDS = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, float),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "tuple": lambda v: isinstance(v, tuple) and not (v and v[0] in ("dtype", "desc", "lambda", "func")),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "Tensor": lambda v: isinstance(v, HostTensor),
}


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return a is not _MISSING
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, HostTensor) and isinstance(b, HostTensor):
        return (a.shape, a.strides, a.symbols, a.dtype, a.storage) == (b.shape, b.strides, b.symbols, b.dtype, b.storage)
    if isinstance(a, Opaque) or isinstance(b, Opaque) or type(a) is not type(b):
        return False
    if isinstance(a, int | float | str | bool) or a is None:
        return a == b and getattr(a, "sym", None) == getattr(b, "sym", None)
    return False


def _both_opaque(a: Any, b: Any) -> bool:
    return type(a) is Opaque and type(b) is Opaque


def _plain_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool | SymInt)


def _target_names(t: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]


def _stored(nodes: list[Any]) -> set[str]:
    out: set[str] = set()
    for root in nodes:
        for n in ast.walk(root):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and dotted_name(n):
                out.add(dotted_name(n))  # `ctx.shape = ...` (host_stores.py)
            elif (  # `shape.append(n)`: the list a name holds is rebound (host_sequences.py)
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in LIST_METHODS
                and isinstance(n.func.value, ast.Name)
            ):
                out.add(n.func.value.id)
    return out


def _decided(c: Any) -> bool:
    """A test value whose truth is the test's: a bool or a plain number (not a size that only
    stands for one, not an unknown value)."""
    return isinstance(c, bool | int | float) and not isinstance(c, SymInt | Opaque)


def _leaves_early(body: list[ast.stmt]) -> bool:
    """A `break`, `continue`, `return`, `raise` or `yield` anywhere in the body (a nested
    loop's `break` included: counting it keeps the answer on the safe side)."""
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break | ast.Continue | ast.Return | ast.Raise | ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(n))
    return False
