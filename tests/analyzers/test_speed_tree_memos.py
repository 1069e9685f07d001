"""Questions about a launcher's or a kernel's syntax tree answered once instead of per probe
(issue 12, checker speed). The answers depend on the tree alone, so they must be the ones the
uncached questions give, and a second asking must return the first answer: these tests pin
both, and that a different question (another name, another tree) is not answered from the memo."""

from __future__ import annotations

import ast

from argus.analyzers.interp.pointer_steps import _enclosing_loop, accumulating_dots, reset_each_iteration
from argus.analyzers.model import binder_inputs
from argus.analyzers.model.host_functions import _key_text
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.launch import _forward_and_ranks
from argus.analyzers.model.launch_later import _written_later, written_later
from argus.analyzers.model.launch_shared import _launcher_index, _passed_before, launcher_index, passed_before
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.launcher_reads import ranks_through_calls
from argus.analyzers.model.nodes import subtree


def _quadratic_enclosing_loop(func: ast.FunctionDef, stmt: ast.AST) -> ast.AST | None:
    """The definition the parent map replaced: among the loops whose subtree holds `stmt`, the
    one inside every other."""
    loop = None
    for n in subtree(func):
        if isinstance(n, ast.For | ast.While) and any(x is stmt for x in subtree(n)):
            if loop is None or any(x is n for x in subtree(loop)):
                loop = n
    return loop


_NESTED = """
def kernel(a, b, n):
    acc = 0
    for i in range(n):
        acc = 0
        for j in range(n):
            while j < 3:
                acc += a * b
                j += 1
            else:
                tail = 1
            acc += 1
        if i:
            for k in range(2):
                part = k
            part2 = 2
    last = acc
"""


def test_the_enclosing_loop_is_the_innermost_one_holding_the_statement() -> None:
    func = ast.parse(_NESTED).body[0]
    assert isinstance(func, ast.FunctionDef)
    loops = {n.lineno: n for n in subtree(func) if isinstance(n, ast.For | ast.While)}
    expected = {"acc = 0": None, "tail = 1": 7, "acc += a * b": 7, "j += 1": 7, "acc += 1": 6,
                "part = k": 14, "part2 = 2": 4, "last = acc": None}
    seen = set()
    for n in subtree(func):
        if isinstance(n, ast.Assign | ast.AugAssign):
            text = ast.unparse(n)
            got = _enclosing_loop(func, n)
            assert got is _quadratic_enclosing_loop(func, n), text
            if text in expected and text not in seen:  # (`acc = 0` twice: the first is outside)
                seen.add(text)
                line = expected[text]
                assert got is (loops[line] if line is not None else None), text
    assert seen == set(expected)


def test_a_statement_of_another_tree_has_no_enclosing_loop() -> None:
    func = ast.parse(_NESTED).body[0]
    other = ast.parse("for i in range(2):\n    x = i\n").body[0]
    assert isinstance(func, ast.FunctionDef) and isinstance(other, ast.For)
    assert _enclosing_loop(func, other.body[0]) is None
    assert _quadratic_enclosing_loop(func, other.body[0]) is None


_RESET = """
@triton.jit
def chunked(a_ptr, b_ptr, o_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for i in range(n):
        part = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        part += tl.dot(tl.load(a_ptr), tl.load(b_ptr))
        acc += tl.dot(tl.load(a_ptr), tl.load(b_ptr))
    tl.store(o_ptr, acc + part)
"""


def test_a_reset_accumulator_is_no_loop_reduction_and_a_running_one_is() -> None:
    func = ast.parse(_RESET).body[0]
    assert isinstance(func, ast.FunctionDef)
    aug = [n for n in subtree(func) if isinstance(n, ast.AugAssign)]
    assert [ast.unparse(n.target) for n in aug] == ["part", "acc"]
    assert reset_each_iteration(func, aug[0], "part")
    assert not reset_each_iteration(func, aug[1], "acc")
    dots = accumulating_dots(func, [])
    acc_dot = next(c for c in subtree(aug[1].value) if isinstance(c, ast.Call) and ast.unparse(c.func) == "tl.dot")
    part_dot = next(c for c in subtree(aug[0].value) if isinstance(c, ast.Call) and ast.unparse(c.func) == "tl.dot")
    assert id(acc_dot) in dots and id(part_dot) not in dots


_LAUNCHER = """
def launch(x, dim=None, size=None, out=None):
    a = torch.empty(4)
    helper(a)
    b = torch.empty(4)
    b.copy_(x)
    OH, OW = size
    if out is None:
        k[(1,)](a, b, x, dim)
    for s in dim:
        pass
"""


def _site(src: str) -> LaunchSite:
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    call = next(n for n in subtree(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    data = src.encode()
    starts = [0]
    for line in data.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return LaunchSite(call, func, func.body, SourceMap(data, starts, 0, 0))


def test_passed_before_answers_once_per_call_and_name_as_the_walk_does() -> None:
    site = _site(_LAUNCHER)
    for name in ("a", "b", "x", "nothing"):
        assert passed_before(site, name) == _passed_before(site, name), name
        assert passed_before(site, name) == _passed_before(site, name), name  # from the memo
    assert passed_before(site, "a") and not passed_before(site, "b")
    memo = site.host_func.__dict__["_argus_memo"]
    assert {k for k in memo if k[0] == "passed_before"} == {
        ("passed_before", site.call, n) for n in ("a", "b", "x", "nothing")
    }
    # another tree with the same text keeps its own answers
    other = _site(_LAUNCHER.replace("helper(a)", "pass"))
    assert not passed_before(other, "a") and passed_before(site, "a")


_MORE_READS = """
def launch(x, pad=None, shape=None, flag=None, sizes=None):
    assert len(pad) == 2
    a, b = [int(p) for p in shape]
    if flag:
        pass
    else:
        k[(1,)](x)
    y = torch.empty(sizes)
    c, d, e = shape
"""


def test_the_input_reads_answer_every_name_of_the_launcher_at_once() -> None:
    site = _site(_LAUNCHER)
    func, call = site.host_func, site.call
    assert func is not None
    reads = {name: binder_inputs._launcher_reads(func, call, name) for name in ("dim", "size", "out", "x")}
    assert reads["out"] == (True, 0, False)  # launched under `out is None`
    assert reads["size"] == (False, 2, False)  # `OH, OW = size`
    assert reads["dim"] == (False, 0, True)  # iterated
    assert reads["x"] == (False, 0, False)  # (`b.copy_(x)`: a call's first argument is not a sequence use)
    memo = func.__dict__["_argus_memo"]["input_reads"]
    assert binder_inputs._launcher_reads(func, call, "size") == reads["size"]
    assert func.__dict__["_argus_memo"]["input_reads"] is memo  # one pass for all names, kept
    more = _site(_MORE_READS)
    assert more.host_func is not None
    got = {n: binder_inputs._launcher_reads(more.host_func, more.call, n) for n in ("pad", "shape", "flag", "sizes")}
    assert got["pad"] == (False, 2, True)  # `assert len(pad) == 2` states the one length (and takes it)
    assert got["shape"] == (False, 0, True)  # unpacked into 2 and into 3 names: no one length
    assert got["flag"] == (True, 0, False)  # in the `else` of `if flag:`
    assert got["sizes"] == (False, 0, True)  # `torch.empty(sizes)` allocates from it


_LATER = """
def launch(x, n):
    a = torch.empty(n + 1)
    first[(n,)](a, x)
    second[(1,)](a, x)
    b = torch.empty(n)
    first[(n,)](b, x)
    b = torch.empty(n)
    second[(1,)](b, x)
    reader[(1,)](x, a)
"""


def test_the_launcher_is_indexed_once_and_written_later_reads_that_index() -> None:
    site = _site(_LATER)
    func = site.host_func
    assert func is not None
    index = launcher_index(func)
    assert launcher_index(func) is index  # kept on the tree
    assert index == _launcher_index(func)
    writes = {"first": (("out", "x"), frozenset({"out"})), "second": (("out", "x"), frozenset({"out"})),
              "reader": (("x", "src"), frozenset({"x"}))}
    site.kernel_writes = writes
    for name in ("a", "b", "x", "nothing"):
        assert written_later(site, name) == _written_later(site, name), name
        assert written_later(site, name) == _written_later(site, name), name  # from the memo
    # `a`: `second` writes through it later; `x`: only `reader` (whose `x` it is) writes it, later
    assert written_later(site, "a") and written_later(site, "x") and not written_later(site, "nothing")
    # the answer reads the kernels' writes: another table is asked again, not answered from the memo
    site.kernel_writes = {"first": writes["first"], "second": (("out", "x"), frozenset()), "reader": writes["reader"]}
    assert not written_later(site, "a") and written_later(site, "x")
    site.kernel_writes = writes
    assert written_later(site, "a")


def test_written_later_sees_the_rebinding_between_the_two_launches() -> None:
    src = _LATER.replace("    first[(n,)](a, x)\n    second", "    first[(n,)](a, x)\n    a = x\n    second")
    site = _site(src)
    site.kernel_writes = {"first": (("out", "x"), frozenset({"out"})), "second": (("out", "x"), frozenset({"out"}))}
    assert not written_later(site, "a") and not _written_later(site, "a")


_THROUGH = """
def launch(x, y):
    z = prep(x)
    k[(1,)](z, y)


def prep(a):
    m, n = a.shape
    return a


def prep2(a):
    b, m, n = a.shape
    return a
"""


def test_ranks_through_calls_follow_the_callee_trees_not_the_table_object() -> None:
    mod = ast.parse(_THROUGH)
    launch, prep, prep2 = (n for n in mod.body if isinstance(n, ast.FunctionDef))

    class Fn:  # (a host_functions.HostFunction stand-in: only `.node` is read)
        def __init__(self, node: ast.FunctionDef) -> None:
            self.node = node

    first = ranks_through_calls(launch, {"prep": Fn(prep)}, set())
    assert first == {"x": 2}
    # a new table of the next check, the same callee tree: the kept answer
    memo = launch.__dict__["_argus_memo"]["ranks_through_calls"]
    assert ranks_through_calls(launch, {"prep": Fn(prep), "other": 1}, set()) == first
    assert launch.__dict__["_argus_memo"]["ranks_through_calls"] is memo
    # the callee edited (another tree under the name): asked again
    assert ranks_through_calls(launch, {"prep": Fn(prep2)}, set()) == {"x": 3}
    assert ranks_through_calls(launch, {}, set()) == {}


_AUTOGRAD = """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        B, L = ctx.shape
        return g
"""


def test_the_forward_copy_is_kept_on_the_forward_and_its_later_ranks_follow_the_backward() -> None:
    cls = ast.parse(_AUTOGRAD).body[0]
    assert isinstance(cls, ast.ClassDef)
    forward, backward = (n for n in cls.body if isinstance(n, ast.FunctionDef))
    copied, ranks = _forward_and_ranks(forward, "ctx", backward, {})
    assert ranks["x"] == 2  # `B, L = ctx.shape` in the backward
    again, _ = _forward_and_ranks(forward, "ctx", backward, {})
    assert again is copied  # (not copied again for the next kernel, or the next check)
    other = ast.parse("def backward(ctx, g):\n    B, L, N = ctx.shape\n    return g\n").body[0]
    assert isinstance(other, ast.FunctionDef)
    copy2, ranks2 = _forward_and_ranks(forward, "ctx", other, {})
    assert copy2 is copied and ranks2["x"] == 3  # an edited backward is read again
    assert copied is not forward and forward.body[0].targets[0].__class__ is ast.Attribute  # the original untouched


def test_a_host_functions_key_text_is_kept_on_its_tree_without_its_docstring() -> None:
    func = ast.parse('def f(a):\n    """doc"""\n    return a + 1\n').body[0]
    assert isinstance(func, ast.FunctionDef)
    text = _key_text(func)
    assert "doc" not in text and "return a + 1" in text
    assert _key_text(func) is text
    assert func.body[0].__class__ is ast.Expr  # the docstring stays in the tree itself
