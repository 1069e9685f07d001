"""The server's text never drifts from the editor's (issue 13).

LSP ends lines at `\\n`, `\\r\\n` and `\\r` only; Python's `str.splitlines` also breaks at form
feed, vertical tab, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and U+2029. pygls's built-in didChange handler
clamped each change's positions against its own splitlines in place, so one form feed in a comment
moved every later insertion. The reference model here is lsp_support's (written from the spec,
independently of argus_lsp.convert), and the server's text is read back through
`argus/documentText` after every edit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from argus.analyzers import check_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_support import index_of, line_starts, position_of, server_env
from lsprotocol import types
from rpc_client import RpcClient

SERVER = [sys.executable, "-P", "-m", "argus_lsp.server"]

# a correct kernel with a form feed in a comment above it (the page break some editors insert)
FORM_FEED = """import triton
import triton.language as tl

# --- kernels ---\x0c
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=offs < n)
"""

ODD_BREAKS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
PIECES = ["", "x", "(", ")", " ", "    ", "é", "🎉", "\n", "\r\n", "\r", "tl.load(p)", "# c", *ODD_BREAKS]


def env() -> dict[str, str]:

    return server_env()


@pytest.fixture(scope="module", params=["utf-16", "utf-8"])
def server(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("sync")
    client = RpcClient(SERVER, cwd=root, env=env())
    result = client.initialize(root, [request.param])
    client.encoding = result["capabilities"].get("positionEncoding", "utf-16")  # type: ignore[attr-defined]
    yield client
    client.close()


def lsp_range(text: str, start: int, end: int, encoding: str, past_end: int = 0) -> dict:
    def pos(i: int) -> dict:
        p = position_of(text, i, encoding)
        return {"line": p.line, "character": p.character}

    s, e = pos(start), pos(end)
    if past_end and _at_line_end(text, end):
        e["character"] += past_end  # LSP: a column past the line's end means the line's end
    return {"start": s, "end": e}


def _at_line_end(text: str, i: int) -> bool:
    return i == len(text) or text[i] in "\r\n"


def apply_reference(text: str, rng: dict, new: str, encoding: str) -> str:
    start = index_of(text, types.Position(**rng["start"]), encoding)
    end = index_of(text, types.Position(**rng["end"]), encoding)
    return text[:start] + new + text[end:]


def test_form_feed_then_an_insertion_below_lands_where_the_editor_put_it(server, tmp_path: Path) -> None:
    uri = (tmp_path / "ff.py").as_uri()
    server.open(uri, FORM_FEED)
    assert server.published(uri, 1) == []
    # append `  # ok` to the `offs = ...` line: splitlines' extra break made pygls see the shorter
    # line above it there, clamp the column to that line's end, and the comment then swallowed
    # `range(0, BLOCK)` (the file got AR001 for `tl.a`)
    line = "    offs = pid * BLOCK + tl.arange(0, BLOCK)"
    row = FORM_FEED.split("\n").index(line)
    pos = {"line": row, "character": len(line)}
    server.change(uri, 2, [{"range": {"start": pos, "end": pos}, "text": "  # ok"}])
    expected = FORM_FEED.replace(line + "\n", line + "  # ok\n")
    assert server.text_of(uri) == expected
    assert server.published(uri, 2) == []
    assert check_source(expected) == []


def test_a_column_past_the_end_of_a_last_line_without_newline_means_its_end(server, tmp_path: Path) -> None:
    uri = (tmp_path / "tail.py").as_uri()
    text = "x = 1\ny = 2"
    server.open(uri, text)
    pos = {"line": 1, "character": 9}
    server.change(uri, 2, [{"range": {"start": pos, "end": pos}, "text": "3"}])
    assert server.text_of(uri) == "x = 1\ny = 23"
    whole = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 99}}
    server.change(uri, 3, [{"range": whole, "text": "z"}])
    assert server.text_of(uri) == "x = 1\nz"


def test_a_line_past_the_end_means_the_end_of_the_text(server, tmp_path: Path) -> None:
    uri = (tmp_path / "past.py").as_uri()
    server.open(uri, "a\x85b\n")
    pos = {"line": 5, "character": 0}
    server.change(uri, 2, [{"range": {"start": pos, "end": pos}, "text": "c"}])
    assert server.text_of(uri) == "a\x85b\nc"


edit = st.tuples(st.floats(0, 1), st.floats(0, 0.3), st.sampled_from(PIECES), st.sampled_from([0, 0, 1, 7]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.lists(st.sampled_from(PIECES), min_size=0, max_size=30).map("".join),
    steps=st.lists(st.lists(edit, min_size=1, max_size=3), min_size=1, max_size=10),
)
def test_fuzz_the_servers_text_matches_the_reference_after_every_edit(server, base: str, steps) -> None:
    enc = server.encoding
    server.doc_count = getattr(server, "doc_count", 0) + 1
    uri = f"file:///fuzz/doc{server.doc_count}.py"
    text = FORM_FEED + base
    server.open(uri, text)
    for version, batch in enumerate(steps, start=2):
        changes = []
        for where, length, new, past_end in batch:
            start = _legal(text, int(where * len(text)))
            end = _legal(text, min(len(text), start + int(length * len(text))))
            rng = lsp_range(text, start, end, enc, past_end)
            changes.append({"range": rng, "text": new})
            text = apply_reference(text, rng, new, enc)  # each change applies to the previous one's result
        server.change(uri, version, changes)
        assert server.text_of(uri) == text, (changes, enc)
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def _legal(text: str, i: int) -> int:
    """A str index a client can name: not inside `\\r\\n`."""
    if 0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n":
        return i - 1
    return i


def test_reference_model_agrees_with_the_spec_on_odd_breaks() -> None:
    # the reference itself: only \n, \r\n and \r start a line
    text = "a\x0cb\x85c\u2028d\re\r\nf\ng"
    assert line_starts(text) == [0, 8, 11, 13]
