"""Hover: a rule's documentation on a code inside `# argus: ignore[...]`, else what the
interpreter knows about the name under the cursor (`describe_at`: tag, shape, dtype, mask).

The rule lookup is instant and happens on the message loop; a variable's description reads the
trace of its kernel (one program, every assignment recorded: traces.py), which the check worker
ships when the user pauses; a kernel without one yet is interpreted once on a thread of the
server's own (never behind a check, and sharing the GIL with none: checks run in worker
processes). The answer may be None (nothing known, or the interpreter does not model that name
yet): then there is no hover at all. It is remembered per document revision and identifier
(`HoverMemo`): an editor asks again as the pointer moves along a name, and the text has not
changed in between. The traces are kept by the exact text they were computed from
(`analyzers.trace.trace_key`), so a hover on another name of the same kernel, in this revision or
a later one that did not touch the kernel or its launcher, only looks up.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from argus.analyzers import RULES, KernelCache
from argus.analyzers.frontend.queries import is_jit_decorator
from lsprotocol import types
from tree_sitter import Node, Tree

from argus_lsp.convert import LineIndex
from argus_lsp.features import traces

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
    """What the interpreter knows about the name at `offset`, from `memo`'s trace of its kernel
    (traces.py: shipped by the check worker, or interpreted here once and kept); slow only when
    the kernel has no trace yet: call it off the message loop. `tree` is the document's own."""
    text = traces.describe(source, offset, tree, memo if memo is not None else traces.trace_memo())
    return _markdown(text) if text else None


def being_traced(source: bytes, offset: int, tree: Tree) -> types.Hover | None:
    """The answer while the kernel at `offset` is still being traced (interpreted on a hover
    thread for longer than a hover waits): which kernel, and that the next hover will know; None
    outside a kernel (there is nothing to trace there). Walks up from the name only: it runs on
    the message loop."""
    span = word_span(source, offset)
    node = tree.root_node.descendant_for_byte_range(offset, offset)
    while node is not None and not _is_kernel(node):
        node = node.parent
    if span is None or node is None:
        return None
    fn = node.child_by_field_name("definition")
    ident = fn.child_by_field_name("name") if fn is not None else None
    kernel = ident.text.decode("utf-8", "replace") if ident is not None and ident.text else "?"
    name = source[span[0] : span[1]].decode("utf-8", "replace")
    return _markdown(f"`{name}`: kernel `{kernel}` is being traced; hover again in a moment.")


def _is_kernel(node: Node) -> bool:
    """A definition carrying a jit decorator (what `find_kernels` takes for a kernel)."""
    if node.type != "decorated_definition":
        return False
    fn = node.child_by_field_name("definition")
    decorators = [c for c in node.children if c.type == "decorator"]
    return (
        fn is not None and fn.type == "function_definition" and any(is_jit_decorator(d) for d in decorators)
    )


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
