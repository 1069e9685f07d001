"""A module's bindings read one top-level statement at a time (analyzers/statement_bindings.py)
give the whole-module answer (module_bindings.module_bindings), and an edit re-reads only the
statements it changed; the shared module tree (module_ast.py) is one object for every reader."""

from __future__ import annotations

import pytest
from argus.analyzers import statement_bindings
from argus.analyzers.frontend.parse import parse
from argus.analyzers.module_ast import module_tree
from argus.analyzers.module_bindings import module_bindings
from argus.analyzers.rules.untold_extent import parsed_module
from argus.analyzers.statement_bindings import top_level_spans

MODULES = {
    "plain": "import os\nfrom a.b import c as d\nX = 1; Y = 2\n\n@deco\ndef f(p):\n    q = p\n    return q\n",
    "branches": "try:\n    import numpy as np\nexcept ImportError:\n    np = None\nif X:\n    Z = 3\nelse:\n    for W in []:\n        pass\n",
    "global": "def g():\n    global LATE\n    LATE = 1\n\nclass K:\n    inner = 2\n",
    "star": "from elsewhere import *\nA = 1\n",
    "star split": "from elsewhere import \\\n    *\n",
    "walrus and with": "with open('f') as fh:\n    pass\nif (n := 3):\n    pass\n# a comment\n",
    "a global in a comment": "# global NOT_REALLY\nB = 1\n",
}


def by_statement(source: bytes) -> frozenset[str] | None:
    spans = top_level_spans(parse(source))
    assert spans is not None
    return module_bindings(source, spans)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_by_statement_equals_the_whole_module(name: str) -> None:
    source = MODULES[name].encode()
    assert by_statement(source) == module_bindings(source)


def test_the_answers_are_those_of_python() -> None:
    assert by_statement(MODULES["global"].encode()) == {"g", "K", "LATE"}
    assert by_statement(MODULES["star"].encode()) is None
    assert by_statement(MODULES["plain"].encode()) == {"os", "d", "X", "Y", "f"}


def test_an_edit_reads_only_the_statement_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statement_bindings, "_MEMO", statement_bindings.StatementMemo())
    read: list[bytes] = []
    real = statement_bindings.parse_alone

    def counting(text: bytes):  # type: ignore[no-untyped-def]
        read.append(text)
        return real(text)

    monkeypatch.setattr("argus.analyzers.module_bindings.parse_alone", counting)
    source = MODULES["plain"].encode()
    by_statement(source)
    assert len(read) == 5  # two imports, two statements of one line, one decorated definition
    read.clear()
    edited = source.replace(b"q = p", b"q = p + 1")
    assert by_statement(edited) == module_bindings(edited)
    assert read == [b"@deco\ndef f(p):\n    q = p + 1\n    return q"]


def test_a_coding_cookie_reads_the_whole_module() -> None:
    source = b"# -*- coding: latin-1 -*-\nA = 1\n"
    assert not statement_bindings.splittable(source)
    assert by_statement(source) == {"A"}


def test_every_reader_shares_one_tree() -> None:
    source = b"def f():\n    return 1\n"
    assert parsed_module(source) is module_tree(source)
    assert module_tree(b"def (:\n") is None
