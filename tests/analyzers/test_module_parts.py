"""The whole-module readers built one top-level statement at a time (analyzers/module_ast.py)
give the answers a parse and a walk of the whole module give, and an edit re-reads only the
statements it changed (issue 13: the language server's keystroke cost).

Each reader is asked twice of the same text: once with the view's split known (the parts), once
without (the whole text, one part), with every memo cleared in between; the answers must be
equal, in the same order (the order decides which caller's guard or which fill a message
names)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from argus.analyzers import module_ast
from argus.analyzers.frontend.parse import parse
from argus.analyzers.model import binder_callers
from argus.analyzers.module_bindings import module_bindings
from argus.analyzers.rules import index_evidence
from argus.analyzers.statement_bindings import top_level_spans

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "corpus_own").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py"))

_NESTED = b'''"""doc"""
import torch

LIMIT = 4


def check(n, r):
    if n % r != 0:
        raise ValueError("n")


def _launch(x, n, block):
    fill = torch.full((n,), -1)
    x[0] = -2
    return fill


class Runner:
    def go(self, x, n, block):
        def inner():
            if n % block == 0:
                return self._launch(x, n, block)
        check(n, block)
        return _launch(x, n, block)


def guarded(x, n, block):
    even = n % block == 0
    if even:
        _launch(x, n, block)
    t = torch.empty(n)
    t.fill_(-3)
'''


@pytest.fixture(autouse=True)
def fresh_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with empty memos (the module's are shared by the whole process)."""
    monkeypatch.setattr(module_ast, "_PARTS", module_ast._PartMemo(module_ast.MEMO_PARTS))
    monkeypatch.setattr(module_ast, "_UNPLACED", module_ast._PartMemo(module_ast.MEMO_PARTS))
    _clear()


def _clear() -> None:
    for fn in (
        module_ast.module_tree,
        module_ast._whole_tree,
        binder_callers._callers_index,
        binder_callers._raising_checks,
        binder_callers._guard_in_module,
        index_evidence._negative_fills,
    ):
        fn.cache_clear()
    module_ast._SPLITS.clear()


def _split(source: bytes) -> None:
    module_ast.remember_split(source, top_level_spans(parse(source)))


def _answers(source: bytes) -> tuple[object, ...]:
    index = binder_callers._callers_index(source)
    return (
        None if index is None else sorted((name, [f.name for f in fs]) for name, fs in index.items()),
        binder_callers._raising_checks(source),
        [binder_callers._guard_in_module(source, name) for name in ("_launch", "check", "inner")],
        index_evidence._negative_fills(source),
        module_bindings(source),
    )


def _both_ways(source: bytes) -> tuple[tuple[object, ...], tuple[object, ...]]:
    _split(source)
    by_parts = _answers(source)
    parts_used = module_ast.split_known(source)
    _clear()
    whole = _answers(source)
    return (by_parts, whole) if parts_used else (whole, whole)


def test_the_parts_answer_as_the_whole_module() -> None:
    by_parts, whole = _both_ways(_NESTED)
    assert by_parts == whole
    index, checks, guards, fills, _bound = by_parts
    # the walk's order: by depth (a method is one deeper than a function), then by place
    assert ("_launch", ["guarded", "go", "inner"]) in index
    assert checks == {"check": "n % r != 0"}
    assert guards[0] == "even"  # (the first caller's: `go` is refused before by `check`)
    assert fills == (("`-2`", "x"), ("`-1`", "fill"), ("`-3`", "t"))  # (a statement before a call in it)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(REPO)))
def test_real_modules_read_alike_both_ways(path: Path) -> None:
    source = path.read_bytes()
    by_parts, whole = _both_ways(source)
    assert by_parts == whole


@pytest.mark.parametrize("path", CORPUS[:12], ids=lambda p: str(p.relative_to(REPO)))
def test_the_assembled_tree_is_the_whole_parse(path: Path) -> None:
    source = path.read_bytes()
    _split(source)
    tree = module_ast.module_tree(source)
    reference = ast.parse(source)
    assert tree is not None
    assert ast.dump(tree, include_attributes=True) == ast.dump(reference, include_attributes=True)


def test_an_edit_parses_only_the_statement_it_changed() -> None:
    _split(_NESTED)
    assert module_ast.module_tree(_NESTED) is not None
    parsed = len(module_ast._PARTS._data)
    edited = _NESTED.replace(b"x[0] = -2", b"x[0] = -5")
    _split(edited)
    tree = module_ast.module_tree(edited)
    assert tree is not None and len(module_ast._PARTS._data) == parsed + 1
    assert index_evidence._negative_fills(edited)[0] == ("`-5`", "x")


def test_answers_stay_when_a_line_opens_above() -> None:
    _split(_NESTED)
    binder_callers._callers_index(_NESTED)
    unplaced = len(module_ast._UNPLACED._data)
    moved = _NESTED.replace(b"LIMIT = 4\n", b"LIMIT = 4\n\n\n")
    _split(moved)
    assert binder_callers._callers_index(moved) is not None
    assert len(module_ast._UNPLACED._data) == unplaced  # no statement read again
    tree = module_ast.module_tree(moved)  # positions: those of the moved text
    assert tree is not None
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(moved), include_attributes=True)


@pytest.mark.parametrize(
    "source",
    [
        b"a = 1; b = 2\ndef f():\n    return a\n",  # a statement that does not start its line
        b"# -*- coding: latin-1 -*-\nA = 1\n",  # a coding cookie
        b"def f(:\n    pass\n",  # no parse: the view's tree has an error, no split
    ],
)
def test_no_split_where_a_statement_alone_could_read_otherwise(source: bytes) -> None:
    _split(source)
    assert not module_ast.split_known(source)
    parts = module_ast.module_parts(source)
    assert parts is None or len(parts) == 1


def test_a_statement_that_does_not_parse_alone_fails_the_module() -> None:
    source = b"x = 1\ny = 2\n"
    module_ast.remember_split(source, [(0, 5), (6, 11)])
    assert module_ast.module_tree(source) is not None
    broken = b"x = 1\ny = (\n"
    module_ast.remember_split(broken, [(0, 5), (6, 11)])
    assert module_ast.module_tree(broken) is None
    assert module_ast.part_answers(broken, "k", lambda part: 1) is None
