"""Hover: a rule's documentation on a code inside `# argus: ignore[...]`, else what the
interpreter knows about the name under the cursor (`describe_at`: tag, shape, dtype, mask).

The rule lookup is instant and happens on the message loop; `describe_at` interprets the kernel,
so the server runs it on a thread of its own (never behind a check). `describe_at` may answer None
(nothing known, or the interpreter does not model that name yet): then there is no hover at all.
Its answer is remembered per document revision and identifier (`HoverMemo`): an editor asks again
as the pointer moves along a name, and the text has not changed in between. Beneath that, the
trace of each kernel (one program, every assignment recorded) is kept by the exact text it was
computed from (`analyzers.trace.trace_key`), so a hover on another name of the same kernel, in
this revision or a later one that did not touch the kernel or its launcher, only looks up.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from argus.analyzers import RULES, KernelCache, describe_at
from lsprotocol import types
from tree_sitter import Tree

from argus_lsp.convert import LineIndex

_IGNORE_LIST = re.compile(rb"#\s*argus:\s*ignore\[([^\]]*)\]", re.I)
_CODE = re.compile(rb"[A-Za-z]+[0-9]*")


def _markdown(value: str, rng: types.Range | None = None) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value), range=rng)


def rule_doc(code: str) -> str | None:
    """The doc of one code, or a list of the codes a prefix (`MB`, `NU00`) stands for."""
    if code in RULES:
        return RULES[code].markdown()
    matches = [info for c, info in RULES.items() if c.startswith(code)]
    if not matches:
        return None
    return "\n".join([f"`{code}` silences:", ""] + [f"- **{i.code}** {i.name}: {i.summary}" for i in matches])


def code_hover(index: LineIndex, offset: int, encoding: str) -> types.Hover | None:
    """A hover when `offset` sits on a code inside an ignore comment."""
    line = index.line_of(offset)
    start = index.starts[line]
    text = index.line_text(line)
    col = offset - start
    for m in _IGNORE_LIST.finditer(text):
        if not m.start(1) <= col <= m.end(1):
            continue
        for c in _CODE.finditer(text, m.start(1), m.end(1)):
            if c.start() <= col <= c.end():
                doc = rule_doc(c.group().decode().upper())
                if doc is None:
                    return None
                return _markdown(doc, index.range(start + c.start(), start + c.end(), encoding))
    return None


def variable_hover(
    source: bytes, offset: int, tree: Tree | None = None, memo: KernelCache | None = None
) -> types.Hover | None:
    """Run `describe_at` (slow the first time in a kernel: call it off the message loop); `tree`
    is the document's own, `memo` the server's kernel traces (`TRACE_MEMO_KERNELS` of them)."""
    text = describe_at(source, offset, tree, memo)
    return _markdown(text) if text else None


TRACE_MEMO_KERNELS = 64  # kernel traces the server keeps (one program's values each)


def trace_memo() -> KernelCache:
    return KernelCache(capacity=TRACE_MEMO_KERNELS)


_WORD = re.compile(rb"[A-Za-z_0-9]+")


def word_span(source: bytes, offset: int) -> tuple[int, int] | None:
    """Byte span of the identifier-like run around `offset` (None when there is none)."""
    start = max(0, offset - 64)
    for m in _WORD.finditer(source, start, offset + 64):
        if m.start() <= offset <= m.end() and m.end() > m.start():
            return m.start(), m.end()
    return None


class HoverMemo:
    """Variable hovers by (uri, revision, identifier span), least recently used dropped first."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._data: OrderedDict[tuple[str, int, int, int], types.Hover | None] = OrderedDict()

    def key(self, uri: str, revision: int, source: bytes, offset: int) -> tuple[str, int, int, int] | None:
        span = word_span(source, offset)
        return None if span is None else (uri, revision, *span)

    def get(self, key: tuple[str, int, int, int]) -> tuple[bool, types.Hover | None]:
        if key in self._data:
            self._data.move_to_end(key)
            return True, self._data[key]
        return False, None

    def put(self, key: tuple[str, int, int, int], value: types.Hover | None) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def drop(self, uri: str) -> None:
        for k in [k for k in self._data if k[0] == uri]:
            del self._data[k]
