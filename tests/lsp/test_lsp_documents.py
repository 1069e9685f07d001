"""Unit tests: LSP content changes become the right bytes and the right tree-sitter InputEdits.

The check is the strongest one available: after any sequence of incremental changes and
re-parses, the document's text equals the text a client holds, and its tree equals a tree parsed
from scratch (an InputEdit with wrong bytes or points would make tree-sitter re-use stale nodes).
"""

from __future__ import annotations

from argus.analyzers.frontend.parse import parse
from hypothesis import given, settings
from hypothesis import strategies as st
from lsp_support import position_of
from lsprotocol import types

from argus_lsp.convert import UTF8, UTF16
from argus_lsp.documents import Document, DocumentStore

BASE = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    # é 🎉
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
"""

PIECES = [
    "",
    "x",
    "(",
    ")",
    "é",
    "🎉",
    "\n",
    "\r\n",
    "    ",
    "tl.load(p)",
    "def f(:\n",
    "@triton.jit\n",
    "'''",
]


def change(
    text: str, start: int, end: int, new: str, encoding: str
) -> types.TextDocumentContentChangePartial:
    rng = types.Range(start=position_of(text, start, encoding), end=position_of(text, end, encoding))
    return types.TextDocumentContentChangePartial(range=rng, text=new)


def sexp(tree) -> str:
    return str(tree.root_node)


def test_single_edit_updates_bytes_and_tree() -> None:
    doc = Document.open("file:///k.py", 1, BASE)
    doc.parse()
    i = BASE.index("1.0")
    doc.apply(change(BASE, i, i + 3, "2.5 * 2", UTF16), UTF16)
    expected = BASE[:i] + "2.5 * 2" + BASE[i + 3 :]
    assert doc.source == expected.encode()
    assert sexp(doc.parse()) == sexp(parse(expected.encode()))


def test_edit_after_non_ascii_uses_the_client_encoding() -> None:
    for enc in (UTF8, UTF16):
        doc = Document.open("file:///k.py", 1, BASE)
        doc.parse()
        i = BASE.index("🎉") + 1
        doc.apply(change(BASE, i, i, " tag", enc), enc)
        assert doc.source.decode().split("\n")[6] == "    # é 🎉 tag"


def test_whole_document_change_replaces_everything() -> None:
    doc = Document.open("file:///k.py", 1, BASE)
    doc.parse()
    doc.apply(types.TextDocumentContentChangeWholeDocument(text="x = 1\n"), UTF16)
    assert doc.source == b"x = 1\n" and doc.tree is None
    assert sexp(doc.parse()) == sexp(parse(b"x = 1\n"))


def test_store_applies_changes_in_order_and_takes_the_version() -> None:
    store = DocumentStore()
    store.open(types.TextDocumentItem(uri="file:///k.py", language_id="python", version=1, text="ab\n"))
    params = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri="file:///k.py", version=3),
        content_changes=[change("ab\n", 1, 1, "X", UTF16), change("aXb\n", 3, 3, "Y", UTF16)],
    )
    doc = store.change(params, UTF16)
    assert doc is not None and doc.source == b"aXbY\n" and doc.version == 3


edits = st.lists(
    st.tuples(st.floats(0, 1), st.floats(0, 0.2), st.sampled_from(PIECES), st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(edits, st.sampled_from([UTF8, UTF16]))
def test_random_edits_keep_text_and_tree_exact(steps, encoding: str) -> None:
    text = BASE
    doc = Document.open("file:///k.py", 1, text)
    doc.parse()
    for where, length, new, reparse in steps:
        start = int(where * len(text))
        end = min(len(text), start + int(length * len(text)))
        if 0 < start < len(text) and text[start - 1] == "\r" and text[start] == "\n":
            start -= 1  # a position cannot split a line break
        if 0 < end < len(text) and text[end - 1] == "\r" and text[end] == "\n":
            end -= 1
        doc.apply(change(text, start, end, new, encoding), encoding)
        text = text[:start] + new + text[end:]
        if reparse:
            doc.parse()
    assert doc.source == text.encode()
    assert sexp(doc.parse()) == sexp(parse(text.encode()))
