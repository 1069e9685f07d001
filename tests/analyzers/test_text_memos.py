"""Answers about tree-sitter nodes kept by the node's text (analyzers/frontend/text_memo.py) and
the module queries answered one top-level statement at a time (frontend/queries._by_statement)
are the answers computed afresh on the current tree: same names, same nodes (issue 13: what
every keystroke's check asked again of definitions the edit did not touch)."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.analyzers.frontend import queries, text_memo
from argus.analyzers.frontend.parse import parse
from argus.analyzers.layout import _normalized, piece_of
from argus.analyzers.model.launch_later import _subscripted_names, subscripted_names

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "tests" / "corpus_own").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py"))

_ALIASED = b'''import triton


@triton.jit
def k1(x_ptr, n, BLOCK: tl.constexpr):
    pass


def launch(x, n):
    fn = k1[(1,)]
    other = k1 if n else k2
    table = {"a": k1}
    fn(x, n, BLOCK=4)
    k1[(2,)](x, n, BLOCK=8)  # a comment with   blanks


class Holder:
    def go(self, x):
        k1[(3,)](x, 1, BLOCK=2)
'''


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_memo, "_DATA", type(text_memo._DATA)())


def _places(pairs: list) -> list:
    return [(payload, n.start_byte, n.end_byte, n.type) for payload, n in pairs]


def _check_module(source: bytes) -> None:
    root = parse(source).root_node
    for _ in range(2):  # computed, then from the memo
        assert _places(queries.launch_calls(root)) == _places(queries._launch_calls(root))
        got = [(a, names, n.start_byte, n.type) for a, names, n in queries.alias_assignments(root)]
        want = [(a, list(names), n.start_byte, n.type) for (a, names), n in queries._alias_assignments(root)]
        assert got == want
    for node in root.children:
        assert piece_of(source, node)[0] == _normalized(source[node.start_byte : node.end_byte], node)[0]
        assert subscripted_names(node) == _subscripted_names(node)
        assert queries.called_names(node) == queries._called_names(node)


def test_the_statement_queries_find_the_whole_module_answers() -> None:
    _check_module(_ALIASED)
    root = parse(_ALIASED).root_node
    assert [name for name, _ in queries.launch_calls(root)] == ["k1", "k1"]  # (`fn = k1[...]` is no call)
    assert [a for a, _, _ in queries.alias_assignments(root)] == ["fn", "other", "table"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_real_modules(path: Path) -> None:
    _check_module(path.read_bytes())


def test_a_kept_answer_lands_on_the_nodes_of_the_edited_tree() -> None:
    root = parse(_ALIASED).root_node
    queries.launch_calls(root)  # kept per statement
    edited = _ALIASED.replace(b"import triton\n", b"import triton\nimport torch  # moved everything\n")
    new_root = parse(edited).root_node
    calls = queries.launch_calls(new_root)
    assert _places(calls) == _places(queries._launch_calls(new_root))
    assert all(n.text.startswith(b"k1[(") for _, n in calls)


def test_a_tree_with_an_error_is_queried_whole() -> None:
    root = parse(b"def f(:\n    k1[(1,)](x)\n").root_node
    assert queries._by_statement(root, "launch_calls", queries._launch_calls) is None
    assert _places(queries.launch_calls(root)) == _places(queries._launch_calls(root))


def test_the_piece_keeps_its_place_and_its_cuts() -> None:
    source = b"x = 1\n\n\ndef f():   \n    a = 1\n\n\n    return a\n"
    node = parse(source).root_node.children[1]
    text, piece = piece_of(source, node)
    assert text == b"def f():\n    a = 1\n    return a"
    assert (piece.start, piece.end, piece.row) == (node.start_byte, node.end_byte, 3)
    moved = b"\n\n" + source
    node2 = parse(moved).root_node.children[1]
    text2, piece2 = piece_of(moved, node2)  # from the memo: the same cuts, the new place
    assert text2 == text and piece2.cuts == piece.cuts and (piece2.start, piece2.row) == (node.start_byte + 2, 5)
