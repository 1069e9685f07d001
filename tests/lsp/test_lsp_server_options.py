"""Trust from initializationOptions, and the hover memo."""

from __future__ import annotations

from argus_lsp.server import client_trusts


def test_trust_needs_an_explicit_true() -> None:
    assert client_trusts({"argus": {"trusted": True}}) is True
    assert client_trusts({"trusted": True}) is True
    for silent in (
        None,
        {},
        [],
        {"argus": {}},
        {"argus": {"debounceMs": 0}},
        {"trusted": "yes"},
        {"trusted": 1},
    ):
        assert client_trusts(silent) is False, silent
    assert client_trusts({"argus": {"trusted": False}}) is False


def test_hover_memo_is_per_revision_and_identifier() -> None:
    from lsprotocol import types

    from argus_lsp.features.hover import HoverMemo, word_span

    src = b"    acc += tl.dot(a_tile, b)\n"
    start = src.index(b"a_tile")
    assert word_span(src, start) == word_span(src, start + 3) == (start, start + 6)
    assert word_span(src, src.index(b"+=") + 1) is None
    memo = HoverMemo(capacity=2)
    hov = types.Hover(contents="x")
    k1 = memo.key("file:///a.py", 3, src, start + 2)
    assert memo.get(k1) == (False, None)
    memo.put(k1, hov)
    assert memo.get(memo.key("file:///a.py", 3, src, start + 5)) == (True, hov)  # same name
    assert memo.get(memo.key("file:///a.py", 4, src, start + 5)) == (False, None)  # text changed
    memo.put(memo.key("file:///b.py", 1, src, 5), None)
    memo.put(memo.key("file:///b.py", 1, src, start), None)  # capacity 2: k1 goes
    assert memo.get(k1) == (False, None)
    memo.drop("file:///b.py")
    assert memo.get(memo.key("file:///b.py", 1, src, 5)) == (False, None)
