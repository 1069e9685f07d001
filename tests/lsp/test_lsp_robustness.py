"""Property: whatever edits arrive, the server stays up, answers in time, and ends up agreeing
with `check_source` on the final text.

One real server process per client profile lives for the whole module (starting one per example
would dominate the run time); each example opens a fresh document, sends 1-15 random incremental
edits (inserts, deletions, garbage with non-ASCII and line breaks, whole kernels deleted), sometimes
pausing so analyses of intermediate versions really run and get superseded, then compares the
diagnostics for the final version with `check_source` on the final text. Every wait has a timeout,
so a deadlock fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import itertools
import re

import pytest
from argus.analyzers import check_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_support import SERVER, Session, diag_key, finding_key, make_client, mutant
from lsprotocol import types
from pytest_lsp import client_capabilities

TOKENS = list("abcxyz_019 ()[]:,.+*=#'\"\\\t\n") + ["\r\n", "é", "🎉", "tl.", "def ", "@triton.jit\n", "    "]
GARBAGE = st.lists(st.sampled_from(TOKENS), max_size=20).map("".join)
KERNEL_START = re.compile(r"^@triton\.jit", re.M)
_ids = itertools.count()


def base_text() -> str:
    add, _, _ = mutant("vector_add_v2")
    mm, _, _ = mutant("matmul_v3")
    return add + "\n\n" + mm


class Rig:
    """A server process and a client on a private event loop, driven from synchronous tests."""

    def __init__(self, profile: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = make_client()
        self.run(self.client.start_io(*SERVER))
        result = self.run(
            self.client.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities(profile),
                    initialization_options={"argus": {"debounceMs": 0}},
                )
            )
        )
        enc = result.capabilities.position_encoding or "utf-16"
        self.session = Session(self.client, getattr(enc, "value", enc))

    def run(self, coro, timeout: float = 60):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def alive(self) -> bool:
        server = self.client._server
        return server is not None and server.returncode is None

    def close(self) -> None:
        try:
            self.run(self.client.shutdown_session(), timeout=20)
        finally:
            self.run(self.client.stop(), timeout=20)
            self.loop.close()


@pytest.fixture(scope="module", params=["visual-studio-code", "neovim"])
def rig(request):
    r = Rig(request.param)
    yield r
    r.close()


@st.composite
def edit_script(draw) -> list[tuple[str, float, float, str, bool]]:
    steps = []
    for _ in range(draw(st.integers(1, 15))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "drop_kernel"]))
        where, length = draw(st.floats(0, 1)), draw(st.floats(0, 0.3))
        new = draw(GARBAGE) if kind in ("insert", "replace") else ""
        steps.append((kind, where, length, new, draw(st.booleans())))
    return steps


def target(text: str, kind: str, where: float, length: float) -> tuple[int, int]:
    """The str range an edit step replaces in the current text."""
    if kind == "drop_kernel":
        starts = [m.start() for m in KERNEL_START.finditer(text)]
        if starts:
            start = starts[int(where * len(starts)) % len(starts)]
            end = text.find("\n\n\n", start)
            return start, len(text) if end < 0 else end
    start = int(where * len(text))
    end = start if kind == "insert" else min(len(text), start + int(length * len(text)))
    for i in (start, end):  # no position lies between \r and \n: move such a boundary before the \r
        if 0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n":
            start, end = (start - 1 if start == i else start), (end - 1 if end == i else end)
    return start, end


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=edit_script())
def test_random_edits_end_in_agreement_with_check_source(rig: Rig, script) -> None:
    s = rig.session
    uri = f"file:///work/random_{next(_ids)}.py"
    s.open(uri, base_text())

    async def play() -> list[types.Diagnostic]:
        for kind, where, length, new, pause in script:
            start, end = target(s.texts[uri], kind, where, length)
            s.edit(uri, start, end, new)
            if pause:
                await asyncio.sleep(0.01)
        return await s.diagnostics(uri, timeout=60)

    try:
        got = rig.run(play(), timeout=90)
        assert rig.alive(), "the server process exited"
        final = s.texts[uri]
        expected = [finding_key(final, f, s.encoding) for f in check_source(final)]
        assert sorted(diag_key(d) for d in got) == sorted(expected)
    finally:
        s.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
