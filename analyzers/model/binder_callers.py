"""Whether a launcher helper runs only under a size relation its callers test (cause L6).

`_launch_aligned(q, k, block_s)` holds a kernel's unmasked path, and its callers call it only
under `if aligned:` where `aligned = seq_len % block_s == 0 and block_d == head_dim // 2`. The
probes bind the helper's own parameters freely, so they run that path on sizes the callers never
let through. The code establishes the relation only at the callers; the binder does not carry it
into the helper, so the bounds of such a launch are not judged (issue 12, rule 1)."""

from __future__ import annotations

import ast
import functools
import re

from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.nodes import subtree
from argus.analyzers.module_ast import Place, bfs_merged, part_answers, walk_places

_MAX_SOURCE = 4 << 20  # a module larger than this is not parsed again for its callers


def caller_guard(site: LaunchSite | None) -> str | None:
    """The test (as written) under which every caller in the launcher's module calls the
    function holding the launch, when each such test relates sizes (`%`, or `==` between two
    computed values); None when a call is unguarded, or none is found in the module."""
    if site is None or site.host_func is None:
        return None
    source = site.smap.source
    if len(source) > _MAX_SOURCE:
        return None
    name = site.host_func.name
    if not _named_besides_its_def(source, name):
        return None  # (no call of it in the module: nothing to parse)
    return _guard_in_module(source, name)


@functools.lru_cache(maxsize=32)  # (a few texts of the module being edited, each a few names)
def _named_besides_its_def(source: bytes, name: str) -> bool:
    """Whether `name` occurs as a word of the module's text other than in `def name`: a call
    of it needs its name written there (each `def name` match is one of the word's matches, so
    more matches than defs means one elsewhere). A name outside ASCII is not looked for: True.
    Kept per module text and name: every probe asks it for every tensor it launches with."""
    if not name.isascii():
        return True
    word = re.escape(name.encode())
    uses = len(re.findall(rb"(?<!\w)" + word + rb"(?!\w)", source))  # (`f(` and `x.f(` alike)
    defs = len(re.findall(rb"\bdef\s+" + word + rb"(?!\w)", source))
    return uses > defs


@functools.lru_cache(maxsize=256)
def _guard_in_module(source: bytes, name: str) -> str | None:
    """`caller_guard` of the function `name` in the module `source`: one answer per module and
    function (every kernel launched from one launcher function asks the same question)."""
    callers = _callers_index(source)
    if callers is None:
        return None
    guards: list[str] = []
    checks = _raising_checks(source)
    predicates = _predicate_checks(source)
    for func in callers.get(name, ()):
        if func.name == name:
            continue
        assigned = _local_values(func)
        for call, tests in _calls_with_guards(func.body, name, []):
            relation = next((t for t in tests if _size_relation(t, assigned)), None)
            checked = next((g for g in map(lambda t: _predicate_guard(t, predicates), tests) if g), None)
            if relation is None and checked is not None:
                guards.append(checked)
            elif relation is None:
                refused = _refused_before(func, call, checks, assigned)
                if refused is None:
                    return None
                guards.append(f"not ({refused})")
            else:
                guards.append(ast.unparse(relation))
    return guards[0] if guards else None


def _refused_before(
    func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, checks: dict[str, str], assigned: dict[str, ast.expr]
) -> str | None:
    """A size relation the caller refuses before it reaches `call`, in a statement of its own
    body ahead of the one holding the call: `if C % r2 != 0: raise ...`, or a call of a module
    function that raises so (flag-gems' `pixel_shuffle` calls `_check_and_get_shapes_strides`,
    which raises unless `C_in % r2 == 0`, then the launch's function). The test as written."""
    for stmt in func.body:
        if any(n is call for n in ast.walk(stmt)):
            return None
        test = _raise_test(stmt)
        if test is not None and _size_relation(test, assigned):
            return ast.unparse(test)
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in checks:
                return checks[n.func.id]
    return None


@functools.lru_cache(maxsize=8)
def _raising_checks(source: bytes) -> dict[str, str]:
    """Module functions whose own body raises under a size relation (`if C_in % r2 != 0:
    raise ...` at its top level): name -> that test as written."""
    out: dict[str, str] = {}
    for checks in part_answers(source, "raising_checks", _part_raising_checks) or []:
        out.update(checks)
    return out


@functools.lru_cache(maxsize=8)
def _predicate_checks(source: bytes) -> dict[str, str]:
    """Module functions that answer False under a size relation at their top level (unsloth's
    `can_use_fp8_block_small_m`: `if ... or K % 128 or N % 16: return False`): name -> that
    test as written. A call under `if pred(...):` is guarded by it as by the test itself."""
    out: dict[str, str] = {}
    for checks in part_answers(source, "predicate_checks", _part_predicate_checks) or []:
        out.update(checks)
    return out


def _part_predicate_checks(part: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in part.body:
        if not isinstance(f, ast.FunctionDef):
            continue
        tests = [
            st.test
            for st in f.body
            if isinstance(st, ast.If) and not st.orelse and len(st.body) == 1 and _returns_false(st.body[0])
        ]
        if tests:
            assigned = _local_values(f)
            test = next((t for t in tests if _size_relation(t, assigned)), None)
            if test is not None:
                out[f.name] = ast.unparse(test)
    return out


def _returns_false(st: ast.stmt) -> bool:
    return isinstance(st, ast.Return) and isinstance(st.value, ast.Constant) and st.value.value is False


def _predicate_guard(test: ast.expr, predicates: dict[str, str]) -> str | None:
    """`pred(...)`, alone or a conjunct of an `and`, of a predicate check: the guard as written
    (the call, and the relation under which it answers False)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for part in parts:
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id in predicates:
            return f"{part.func.id}(...), which answers False where {predicates[part.func.id]}"
    return None


def _part_raising_checks(part: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in part.body:
        if isinstance(f, ast.FunctionDef):
            tests = [t for t in map(_raise_test, f.body) if t is not None]
            if not tests:
                continue  # (most functions, kernels among them: their assignments are not needed)
            assigned = _local_values(f)
            test = next((t for t in tests if _size_relation(t, assigned)), None)
            if test is not None:
                out[f.name] = ast.unparse(test)
    return out


def _raise_test(stmt: ast.stmt) -> ast.expr | None:
    """`if T: raise ...` (nothing else in the branch, no else): T."""
    if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise):
        return stmt.test
    return None


Func = ast.FunctionDef | ast.AsyncFunctionDef


@functools.lru_cache(maxsize=8)
def _callers_index(source: bytes) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] | None:
    """For each name called in the module (plainly or as a method), the functions whose bodies
    call it (a nested function's calls count for the functions around it), in `ast.walk` order:
    a function calling no such name holds no call to judge, so `_guard_in_module` looks at these
    alone, as a walk over every function would find them. Each top-level statement's functions
    are found once per text of it (module_ast.part_answers), and put in the whole walk's order."""
    answers = part_answers(source, "callers_index", _part_functions)
    if answers is None:
        return None
    index: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for func, called in bfs_merged(answers):
        for name in called:
            index.setdefault(name, []).append(func)
    return index


def _part_functions(part: ast.Module) -> list[tuple[Place, tuple[Func, frozenset[str]]]]:
    """The functions of one part, each with its place in the walk and the names its body calls
    (with those of the functions nested in it)."""
    funcs: list[tuple[Place, Func]] = []
    owner: dict[int, ast.AST | None] = {id(part): None}  # node -> the innermost function around it
    called: dict[int, set[str]] = {}
    for place, node, parent in walk_places(part):  # (parents before children: theirs is known)
        around = None if parent is None else parent if isinstance(parent, Func) else owner[id(parent)]
        owner[id(node)] = around
        if isinstance(node, Func):
            funcs.append((place, node))
            called[id(node)] = set()
        elif around is not None and isinstance(node, ast.Call):
            name = _called_name(node)
            if name is not None:
                called[id(around)].add(name)
    for _, func in reversed(funcs):  # innermost first: each adds its calls to the one around it
        around = owner[id(func)]
        if around is not None:
            called[id(around)] |= called[id(func)]
    return [(place, (func, frozenset(called[id(func)]))) for place, func in funcs]


def plain_calls(source: bytes, name: str) -> list[tuple[Func, ast.Call]] | None:
    """(caller, call) for every `name(...)` call (a plain name: a method of the same name is
    another function) in the module's functions, in the callers index's order; None where the
    module does not parse. The callers' node lists are kept on their trees, which outlive an
    edit elsewhere (caller_literals.py and caller_layouts.py read the calls so)."""
    index = _callers_index(source)
    if index is None:
        return None
    return [
        (caller, call)
        for caller in index.get(name, ())
        for call in subtree(caller)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name
    ]


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _local_values(func: ast.AST) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            out.setdefault(n.targets[0].id, n.value)
    return out


def _calls_with_guards(
    body: list[ast.stmt], name: str, tests: list[ast.expr]
) -> list[tuple[ast.Call, list[ast.expr]]]:
    """Calls of `name` (plain or as a method) in `body`, each with the `if` tests that hold
    where it runs: the test of every enclosing `if` branch, and of an `else` whose test is a
    single relation (the else of a conjunction says nothing of each part)."""
    out: list[tuple[ast.Call, list[ast.expr]]] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            out += _calls_in(stmt.test, name, tests)
            out += _calls_with_guards(stmt.body, name, [*tests, stmt.test])
            single = not isinstance(stmt.test, ast.BoolOp)
            out += _calls_with_guards(stmt.orelse, name, [*tests, stmt.test] if single else tests)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue  # judged as a function of its own
        else:
            blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
            nested = [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]
            if nested:
                for part in ast.iter_child_nodes(stmt):
                    if isinstance(part, ast.expr):
                        out += _calls_in(part, name, tests)
                for b in nested:
                    out += _calls_with_guards(b, name, tests)
                for h in getattr(stmt, "handlers", []):
                    out += _calls_with_guards(h.body, name, tests)
            else:
                out += _calls_in(stmt, name, tests)
    return out


def _calls_in(node: ast.AST, name: str, tests: list[ast.expr]) -> list[tuple[ast.Call, list[ast.expr]]]:
    return [
        (n, tests)
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Name) and n.func.id == name)
            or (isinstance(n.func, ast.Attribute) and n.func.attr == name)
        )
    ]


def _size_relation(test: ast.expr, assigned: dict[str, ast.expr], depth: int = 0) -> bool:
    """`seq_len % block_s == 0`, `block_d == head_dim // 2` (an equality with a computed size),
    or a name assigned one of them (followed through the caller's assignments)."""
    if depth > 4:
        return False
    for n in ast.walk(test):
        if isinstance(n, ast.Compare):
            sides = [n.left, *n.comparators]
            if any(isinstance(s, ast.BinOp) and isinstance(s.op, ast.Mod) for s in sides):
                return True
            if all(isinstance(op, ast.Eq | ast.NotEq) for op in n.ops) and any(
                isinstance(s, ast.BinOp) for s in sides
            ):
                return True  # `block_d == head_dim // 2`
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            return True  # `if n % block:` (a remainder tested for truth)
        elif isinstance(n, ast.Name) and n.id in assigned and assigned[n.id] is not test:
            if _size_relation(assigned[n.id], assigned, depth + 1):
                return True
    return False
