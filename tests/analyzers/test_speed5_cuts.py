"""The cuts of `speed5` (issue 12, checker speed): each computes what the code it replaced
computed, with less work. The replaced definitions are kept here as the reference: the kernel's
bindings read with one generator per node, `ast.unparse` of a loop's callee at every execution
of the loop and of an int32 product at every MB003 fact, and `ast.unparse(...).endswith(
"num_programs")` for every call of a kernel. Each test pins the new code to the reference on
inputs made to reach every branch, and the text caches also on whole checks."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import numpy as np
import pytest
from argus.analyzers import check_source, unbound_names
from argus.analyzers.interp import access_checks, ops_arith, ops_core, pointer_steps, programs, statements
from argus.analyzers.interp.values import Val


def _reference_kernel_bindings(func: ast.FunctionDef) -> frozenset[str]:
    """`_kernel_bindings` as it was (speed4): `names_bound_by` of every node but `func`."""
    out = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    for node in ast.walk(func):
        if node is not func:
            out.update(unbound_names.names_bound_by(node))
    return frozenset(out)


# every construct that binds a name: parameters of each kind, stores, augmented and annotated
# stores, `del`, loop, `with` and comprehension targets, a walrus, lambda parameters, nested
# definitions, local imports, `global`/`nonlocal`, `except ... as`, match captures and rests
_BINDING_KERNELS = [
    """
    def k(a, /, b, *args, c, d=1, **kw):
        x = a + b
        y: int = 3
        z += 1
        del w
        for i, (j, m) in enumerate(args):
            pass
        with open(b) as (f, g):
            pass
        q = [u for u in range(3) if (v := u)]
        r = lambda s, *t, **o: s
        def inner(p):
            nonlocal x
            return p
        class C:
            attr = 1
        import numpy as np
        import os.path
        from math import sqrt as root, floor
        global G
        try:
            pass
        except ValueError as err:
            pass
        match a:
            case [1, *rest]:
                pass
            case {"k": vv, **others}:
                pass
            case (hh as captured):
                pass
        return x.attr
    """,
    """
    def k(x_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    """,
    """
    def k():
        pass
    """,
    """
    async def k(a):
        async with a as b:
            pass
        async for c in a:
            pass
    """,
]


@pytest.mark.parametrize("text", _BINDING_KERNELS)
def test_kernel_bindings_are_the_references(text: str) -> None:
    func = ast.parse(textwrap.dedent(text)).body[0]
    assert unbound_names._kernel_bindings(func) == _reference_kernel_bindings(func)  # type: ignore[arg-type]


def test_kernel_bindings_leave_out_the_kernels_own_name_and_loads() -> None:
    func = ast.parse("def k(a):\n    def k2():\n        pass\n    return b + k\n").body[0]
    got = unbound_names._kernel_bindings(func)  # type: ignore[arg-type]
    assert got == {"a", "k2"}  # `k` itself and the loads `b`, `k` are not bindings


def test_kernel_bindings_match_the_reference_on_this_repository() -> None:
    """Every function of the analyzers' own sources: thousands of statements of every kind."""
    import argus.analyzers as pkg  # noqa: PLC0415

    count = 0
    for path in sorted(Path(pkg.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert unbound_names._kernel_bindings(node) == _reference_kernel_bindings(node), (path, node.name)  # type: ignore[arg-type]
                count += 1
    assert count > 1000


@pytest.mark.parametrize(
    "callee",
    [
        "num_programs",
        "tl.num_programs",
        "triton.language.num_programs",
        "my_num_programs",
        "tl.my_num_programs",
        "num_programs2",
        "tl.num_programs_x",
        "programs",
        "num.programs",
        "tl.num",
        "f()",
        "fns[num_programs]",
        "(lambda: num_programs)",
        "(tl if a else b).num_programs",
        "getattr(tl, 'num_programs')",
    ],
)
def test_names_num_programs_is_the_unparse_test(callee: str) -> None:
    func = ast.parse(f"{callee}(0)", mode="eval").body.func  # type: ignore[attr-defined]
    assert programs._names_num_programs(func) == ast.unparse(func).endswith("num_programs")


@pytest.mark.parametrize("callee", ["range", "tl.range", "tl.static_range", "triton.language.range", "a.b[c]", "f(x)"])
def test_callee_text_is_the_unparse_and_is_kept(callee: str) -> None:
    func = ast.parse(f"{callee}(4)", mode="eval").body.func  # type: ignore[attr-defined]
    assert statements._callee_text(func) == ast.unparse(func)
    assert func._argus_text == ast.unparse(func)
    func._argus_text = "kept"
    assert statements._callee_text(func) == "kept"  # read off the node, not unparsed again


def test_text_of_is_the_unparse_and_is_kept() -> None:
    node = ast.parse("row * stride + pid * (n + 1)", mode="eval").body
    assert access_checks._text_of(node) == ast.unparse(node)
    node._argus_text = "kept"  # type: ignore[attr-defined]
    assert access_checks._text_of(node) == "kept"


LOOPS = b'''import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for r in tl.range(0, ROWS):
        row = pid * ROWS + r
        for c in range(0, n_cols, BLOCK):
            x = tl.load(x_ptr + row * stride + c + offs, mask=(c + offs < n_cols) & (row < n_rows))
            tl.store(y_ptr + row * stride + c + offs, x, mask=(c + offs < n_cols + 1) & (row < n_rows))
    for s in tl.static_range(2):
        tl.store(y_ptr + pid * stride + s, 0.0)


def rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rows_kernel[(triton.cdiv(n_rows, 4),)](x, y, n_rows, n_cols, x.stride(0), BLOCK=128, ROWS=4)
'''


def test_a_check_with_loops_and_int32_products_is_unchanged_by_the_caches() -> None:
    """The same findings with the caches warm (a second check reuses nothing: new trees) and
    with `ast.unparse` in place of both caches; the store past the row's end (MB002) and the
    int32 products (MB003) are found."""
    first = check_source(LOOPS, "rows.py")
    codes = {f.code for f in first}
    assert "MB003" in codes and any(f.code.startswith("MB00") and f.code != "MB003" for f in first), codes
    again = check_source(LOOPS, "rows.py")
    assert [repr(f) for f in again] == [repr(f) for f in first]
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(statements, "_callee_text", ast.unparse)
        patch.setattr(access_checks, "_text_of", ast.unparse)
        reference = check_source(LOOPS, "rows.py")
    finally:
        patch.undo()
    assert [repr(f) for f in reference] == [repr(f) for f in first]
    assert any("row * stride" in f.message for f in first if f.code == "MB003")


def _reference_before_launch(func: ast.FunctionDef, call: ast.Call, known: set[str]) -> ast.Name | None:
    """`first_unbound_before_launch` as it was: the walk over the reads before the launch."""
    found = unbound_names._unbound_among(unbound_names._reads_before(func.body, call), func, known, lambda: frozenset())
    return next(iter(found), None)


_LAUNCHERS = [
    "def f(x):\n    n = x.numel()\n    k[(n,)](x, n)\n",  # every name bound
    "def f(x):\n    n = x.numel() * scale\n    k[(n,)](x, n)\n",  # unbound before the launch
    "def f(x):\n    k[(1,)](x)\n    return undefined_after\n",  # unbound after it only
    "def f(x):\n    if x:\n        k[(1,)](x)\n    else:\n        y = other\n",  # in the other arm only
    "def f(x):\n    for i in range(nn):\n        k[(i,)](x)\n",  # in the loop header
    "def f(x):\n    k[(grid_of(x),)](x)\n",  # in the launch's own grid
]


@pytest.mark.parametrize("text", _LAUNCHERS)
def test_first_unbound_before_launch_is_the_references(text: str) -> None:
    func = ast.parse(text).body[0]
    call = next(n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    known = {"k"}
    got = unbound_names.first_unbound_before_launch(func, call, known, lambda: frozenset())  # type: ignore[arg-type]
    want = _reference_before_launch(func, call, known)  # type: ignore[arg-type]
    assert (got.id if got else None) == (want.id if want else None)
    assert (got is None) == (text in (_LAUNCHERS[0], _LAUNCHERS[2], _LAUNCHERS[3]))


def _reference_accumulating_dots(func: ast.FunctionDef, helpers: list[ast.FunctionDef]) -> set[int]:
    """`accumulating_dots` as it was: every assignment asked `reset_each_iteration`."""
    out: set[int] = set()
    for f in [func, *helpers]:
        for n in ast.walk(f):
            value, target = None, None
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                value, target = n.value, None
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                value, target = n.value, n.targets[0].id
            if value is None:
                continue
            inner = list(ast.walk(value))
            if target is not None and not any(isinstance(x, ast.Name) and x.id == target for x in inner):
                continue
            name = target if target is not None else n.target.id  # type: ignore[union-attr]
            if pointer_steps.reset_each_iteration(f, n, name):
                continue
            out |= {
                id(c)
                for c in inner
                if isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute | ast.Name)
                and (c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id) == "dot"
            }
    return out


_DOT_KERNELS = [
    # a loop reduction by +=, by `acc = acc + ...`, through `tl.dot(a, b, acc)` and a method
    "def k(a, b):\n    acc = 0\n    for i in range(4):\n        acc += tl.dot(a, b)\n        acc = acc + dot(a, b)\n"
    "        acc = tl.dot(a, b, acc)\n        acc = a.dot(b) + acc\n",
    # reset earlier in the same iteration: no loop reduction
    "def k(a, b):\n    for i in range(4):\n        t = tl.zeros((4, 4))\n        t += tl.dot(a, b)\n",
    # a dot that does not accumulate, and assignments without any dot
    "def k(a, b):\n    x = tl.dot(a, b)\n    y = x + 1\n    y += x\n",
    # no dot at all
    "def k(a, b):\n    s = 0\n    for i in range(4):\n        s += a\n        s = s * b\n",
]


@pytest.mark.parametrize("text", _DOT_KERNELS)
def test_accumulating_dots_are_the_references(text: str) -> None:
    func = ast.parse(text).body[0]
    helper = ast.parse(_DOT_KERNELS[0].replace("def k(", "def h(")).body[0]
    for helpers in ([], [helper]):
        got = pointer_steps.accumulating_dots(func, helpers)  # type: ignore[arg-type]
        assert got == _reference_accumulating_dots(func, helpers)  # type: ignore[arg-type]
    assert bool(pointer_steps.accumulating_dots(func, [])) == (text is _DOT_KERNELS[0])  # type: ignore[arg-type]


_INT_DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def test_int_promote_remembers_the_promotion_of_every_pair() -> None:
    for da in _INT_DTYPES:
        for db in _INT_DTYPES:
            want = ops_core._int_promote(da, db)
            assert ops_core.int_promote(da, db) == want
            assert ops_core.int_promote(da, db) == want  # (the remembered answer)
            assert ops_core._INT_PROMOTED[(da, db)] == want
    assert ops_core.int_promote("int16", "int16") == "int16"
    assert ops_core.int_promote("int32", "uint32") == "uint32"
    assert ops_core.int_promote("int64", "uint32") == "int64"


def _reference_operand_facts(grows: Val, factor: Val) -> dict:
    g = np.asarray(grows.data)
    return {
        "grows_max": int(np.max(np.abs(g))) if g.size else 0,
        "factor": int(np.max(np.abs(np.asarray(factor.data)))),
        "factor_name": factor.param or "the stride",
    }


@pytest.mark.parametrize(
    ("grows", "factor"),
    [
        (np.asarray(3), np.asarray(7)),
        (np.asarray(-5), np.asarray(-2)),
        (np.arange(-4, 3), np.asarray(9)),
        (np.arange(6).reshape(2, 3), np.asarray([1, -11, 4])),
        (np.zeros((0,), dtype=np.int64), np.asarray(2)),
        (np.asarray(2**40), np.asarray(2**20)),
    ],
)
def test_operand_facts_are_the_references(grows: np.ndarray, factor: np.ndarray) -> None:
    a = Val(np.asarray(grows, dtype=np.int64), "int32", grows=True)
    b = Val(np.asarray(factor, dtype=np.int64), "int32", runtime=True, param="stride")
    assert ops_arith._operand_facts(a, b) == _reference_operand_facts(a, b)


def test_an_empty_factor_still_raises_as_the_reference() -> None:
    a = Val(np.asarray(1, dtype=np.int64), "int32")
    b = Val(np.zeros((0,), dtype=np.int64), "int32")
    with pytest.raises(ValueError):
        _reference_operand_facts(a, b)
    with pytest.raises(ValueError):
        ops_arith._operand_facts(a, b)


def _numpy_bshape(*shapes: tuple) -> tuple | str:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return "error"


def _our_bshape(*shapes: tuple) -> tuple | str:
    try:
        out = ops_core.bshape(*shapes)
    except Exception as e:  # noqa: BLE001
        assert type(e).__name__ == "Unevaluable", e
        assert str(e).startswith("incompatible tile shapes " + " and ".join(map(str, shapes))), e
        return "error"
    assert all(type(d) is int for d in out)
    return out


@pytest.mark.parametrize(
    "shapes",
    [
        ((), ()),
        ((4,), ()),
        ((), (4, 2)),
        ((4, 1), (1, 8)),
        ((4, 8), (8,)),
        ((4, 8), (4,)),  # mismatch
        ((0,), (1,)),
        ((0,), (0,)),
        ((0,), (3,)),  # mismatch
        ((2, 1, 3), (5, 1), (1, 1, 1, 1)),
        ((1,), (1,), (7,)),
        ((3,), (2,), (1,)),  # mismatch
    ],
)
def test_bshape_is_numpys_broadcast(shapes: tuple) -> None:
    assert _our_bshape(*shapes) == _numpy_bshape(*shapes)


def test_bshape_matches_numpy_on_random_shapes_and_leaves_the_rest_to_it() -> None:
    rng = np.random.default_rng(5)
    for _ in range(3000):
        k = int(rng.integers(1, 4))
        shapes = tuple(
            tuple(int(d) for d in rng.choice([0, 1, 1, 2, 3], size=int(rng.integers(0, 4)))) for _ in range(k)
        )
        assert _our_bshape(*shapes) == _numpy_bshape(*shapes), shapes
    # not tuples of Python ints: numpy's answer (numpy ints, a list, a bare int)
    assert ops_core._broadcast(((np.int64(3),), (3,))) is None
    assert ops_core._broadcast(([3], (3,))) is None
    assert _our_bshape((np.int64(3), 1), (1, 4)) == (3, 4)
    assert _our_bshape([2, 1], (3,)) == (2, 3)
    assert _our_bshape((-1,), (1,)) == _numpy_bshape((-1,), (1,))
