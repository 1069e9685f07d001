"""Helpers for the language-server tests, written independently of argus_lsp.convert so the tests
check the server's position handling instead of repeating it.

Corpus mutants are vendored in data/ (copies of shared/corpus files, `.py.txt` so no tool treats
them as project code); `mutant()` strips the `# expect:` / `# also:` markers before the checker
sees the text and returns where they were.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from argus.analyzers import Finding
from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test's environment with this checkout first on PYTHONPATH (the code under test), and no
    empty entry: an empty one means the current folder, the workspace a hostile test opens."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p)
    return env


SERVER = [sys.executable, "-m", "argus_lsp.server"]

_MARKER = re.compile(r"\s*#\s*(expect|also):\s*([A-Z0-9, ]+?)(?=\s*#|\s*$)")
_EOL = re.compile(r"\r\n|\r|\n")


def mutant(name: str) -> tuple[str, dict[str, set[int]], dict[str, set[int]]]:
    """(stripped text, {code: 0-based lines expected}, {code: 0-based lines allowed})."""
    expect: dict[str, set[int]] = {}
    also: dict[str, set[int]] = {}
    lines = []
    for row, line in enumerate((DATA / f"{name}.py.txt").read_text().split("\n")):
        for kind, codes in _MARKER.findall(line):
            for code in codes.replace(",", " ").split():
                (expect if kind == "expect" else also).setdefault(code, set()).add(row)
        lines.append(_MARKER.sub("", line))
    return "\n".join(lines), expect, also


# -- positions, counted the way the LSP spec says -------------------------------------------------
def _units(s: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-32":
        return len(s)
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _EOL.finditer(text)]


def position_of(text: str, index: int, encoding: str) -> types.Position:
    """LSP position of the str index `index`."""
    starts = line_starts(text)
    line = max(i for i, s in enumerate(starts) if s <= index)
    return types.Position(line=line, character=_units(text[starts[line] : index], encoding))


def index_of(text: str, pos: types.Position, encoding: str) -> int:
    """str index of an LSP position."""
    starts = line_starts(text)
    if pos.line >= len(starts):
        return len(text)
    start = starts[pos.line]
    end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    content = _EOL.sub("", text[start:end])
    count = 0
    for i, ch in enumerate(content):
        if count >= pos.character:
            return start + i
        count += _units(ch, encoding)
    return start + len(content)


def byte_to_index(text: str, byte_offset: int) -> int:
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore"))


def finding_range(text: str, f: Finding, encoding: str) -> tuple[int, int, int, int]:
    s = position_of(text, byte_to_index(text, f.span.start_byte), encoding)
    e = position_of(text, byte_to_index(text, f.span.end_byte), encoding)
    return (s.line, s.character, e.line, e.character)


def diag_key(d: types.Diagnostic) -> tuple:
    r = d.range
    return (d.code, r.start.line, r.start.character, r.end.line, r.end.character, d.message)


def finding_key(text: str, f: Finding, encoding: str) -> tuple:
    return (f.code, *finding_range(text, f, encoding), f.message)


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP text edits (all relative to `text`) as a client would."""
    spans = [
        (index_of(text, e.range.start, encoding), index_of(text, e.range.end, encoding), e.new_text)
        for e in edits
    ]
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


# -- a test client that remembers every publishDiagnostics with its version -----------------------
def make_client() -> LanguageClient:
    from pytest_lsp.client import default_converter

    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def on_publish(c: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        c.published.append(params)  # type: ignore[attr-defined]
        c.diagnostics[params.uri] = params.diagnostics

    register_lsp_features(
        client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: on_publish}
    )
    return client


class Session:
    """One client talking to one server: open/edit documents, get their diagnostics push or pull."""

    def __init__(self, client: LanguageClient, encoding: str) -> None:
        self.client = client
        self.encoding = encoding
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    @property
    def pulls(self) -> bool:
        caps = self.client.capabilities
        return bool(caps and caps.text_document and caps.text_document.diagnostic is not None)

    def open(self, uri: str, text: str) -> None:
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )

    def edit(self, uri: str, start: int, end: int, new: str) -> None:
        """Replace str indices [start, end) by `new` with one incremental change."""
        text = self.texts[uri]
        rng = types.Range(
            start=position_of(text, start, self.encoding), end=position_of(text, end, self.encoding)
        )
        self.send(uri, [types.TextDocumentContentChangePartial(range=rng, text=new)])
        self.texts[uri] = text[:start] + new + text[end:]

    def apply(self, uri: str, edits: list[types.TextEdit]) -> None:
        """Apply a workspace edit's text edits, sent as incremental changes (last first)."""
        text = self.texts[uri]
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        self.send(
            uri, [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered]
        )
        self.texts[uri] = apply_edits(text, edits, self.encoding)

    def send(self, uri: str, changes: list) -> None:
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=changes,
            )
        )

    async def diagnostics(self, uri: str, timeout: float = 30) -> list[types.Diagnostic]:
        """The server's diagnostics for the document's current version."""
        if self.pulls:
            report = await asyncio.wait_for(
                self.client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
                ),
                timeout,
            )
            return list(report.items)
        version = self.versions[uri]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            for p in reversed(self.client.published):  # type: ignore[attr-defined]
                if p.uri == uri and p.version == version:
                    return list(p.diagnostics)
            await asyncio.sleep(0.005)
        raise TimeoutError(f"no diagnostics for {uri} version {version} within {timeout}s")


# -- shared sources ---------------------------------------------------------------------------------
HALF_TYPED = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n
    y = x * 2.0 +
"""

UNICODE_HALF_TYPED = """import triton
import triton.language as tl


@triton.jit
def label_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # é and 🎉 before the error, on the same line and above it
    x = foo("é🎉", tl.program_id(0) if)
"""


def edits_of(edit: types.WorkspaceEdit | None, uri: str) -> list[types.TextEdit]:
    assert edit is not None
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))
