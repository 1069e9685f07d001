"""Open documents as the server sees them: UTF-8 bytes, a version and one tree-sitter tree.

Each LSP content change is applied to the bytes and mirrored as a tree-sitter `InputEdit`
(bytes and (row, byte column) points), so the next parse re-uses every subtree the edit did not
touch. Changes and parses happen on the message loop only; the analysis worker gets its own copy
of the tree, because `Tree.edit` mutates a tree in place.

Positions follow LSP's own line model (`convert.LineIndex`): lines end at `\n`, `\r\n` or `\r`
only, so a form feed, `\x85` or U+2028 in a comment is an ordinary character, and a column past
a line's end means the line's end (also on a last line without a newline). The server gets the
client's params untouched (server.py keeps pygls's own text handling out of the way).

Every change bumps `revision`, a counter of the server's own: the scheduler keys its work on it,
so a client that sends the same version number twice still gets the new text checked.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from argus.analyzers.frontend.parse import parse
from lsprotocol import types
from tree_sitter import Tree

from argus_lsp.convert import LineIndex, decode, encode, ts_point

_REVISIONS = itertools.count(1)


@dataclass
class Document:
    uri: str
    version: int
    source: bytes
    tree: Tree | None = None  # None: the next parse starts from scratch
    revision: int = field(default_factory=lambda: next(_REVISIONS))
    _index: LineIndex | None = field(default=None, repr=False)
    _parsed: bool = field(default=False, repr=False)  # `tree` is the tree of `source` (no edit since)

    @classmethod
    def open(cls, uri: str, version: int, text: str) -> Document:
        return cls(uri, version, encode(text))

    def text(self) -> str:
        """The document as the client's string (what `argus/documentText` answers)."""
        return decode(self.source)

    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.source)
        return self._index

    def apply(self, change: types.TextDocumentContentChangeEvent, encoding: str) -> None:
        """Apply one LSP content change (in the client's `encoding`) to the bytes and the tree."""
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self.source = encode(change.text)
            self.tree, self._parsed = None, False
            self._index = None
            return
        index = self.index()
        start = index.offset(change.range.start, encoding)
        end = index.offset(change.range.end, encoding)
        start, end = min(start, end), max(start, end)
        self.replace(start, end, encode(change.text))

    def replace(self, start: int, end: int, new: bytes) -> None:
        """Replace bytes [start, end) by `new`, recording the edit on the tree for re-use."""
        old = self.source
        self.source = old[:start] + new + old[end:]
        self._index = None
        self._parsed = False
        if self.tree is not None:
            new_end = start + len(new)
            self.tree.edit(
                start_byte=start,
                old_end_byte=end,
                new_end_byte=new_end,
                start_point=ts_point(old, start),
                old_end_point=ts_point(old, end),
                new_end_point=ts_point(self.source, new_end),
            )

    def parse(self) -> Tree:
        """Re-parse (incrementally when a tree exists) and return a private copy for a worker.

        Not again while no edit came: `frontend.parse` parses a text with errors from scratch."""
        if self.tree is None or not self._parsed:
            self.tree, self._parsed = parse(self.source, self.tree), True
        return self.tree.copy()


class DocumentStore:
    """uri -> Document for every open document."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}

    def open(self, item: types.TextDocumentItem) -> Document:
        doc = self._docs[item.uri] = Document.open(item.uri, item.version, item.text)
        return doc

    def change(self, params: types.DidChangeTextDocumentParams, encoding: str) -> Document | None:
        doc = self._docs.get(params.text_document.uri)
        if doc is None:
            return None
        for change in params.content_changes:
            doc.apply(change, encoding)
        doc.version = params.text_document.version
        doc.revision = next(_REVISIONS)
        return doc

    def close(self, uri: str) -> None:
        self._docs.pop(uri, None)

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def __iter__(self):
        return iter(list(self._docs.values()))
