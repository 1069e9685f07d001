"""Hover: a rule's documentation on a code inside `# argus: ignore[...]`, else what the
interpreter knows about the name under the cursor (`describe_at`: tag, shape, dtype, mask).

The rule lookup is instant and happens on the message loop; `describe_at` interprets the kernel,
so the server runs it on a worker thread. `describe_at` may answer None (nothing known, or the
interpreter does not model that name yet): then there is no hover at all.
"""

from __future__ import annotations

import re

from lsprotocol import types

from analyzers import RULES, describe_at
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


def variable_hover(source: bytes, offset: int) -> types.Hover | None:
    """Run `describe_at` (slow: call it off the message loop)."""
    text = describe_at(source, offset)
    return _markdown(text) if text else None
