"""Kernel-side causes of false findings fixed on branch `kprec` (docs/realworld.md), each with
the bug of the same shape that must still be found: the fixtures of tests/corpus_realworld are
mutated the way a real kernel breaks the idiom, and the finding is required at the broken line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from argus.analyzers import check_source
from argus.analyzers.findings import Severity
from argus.analyzers.interp.coverage import merge_cover

FOLDER = Path(__file__).resolve().parents[1] / "corpus_realworld"


def serious(source: str, name: str) -> list[tuple[str, int, str]]:
    found = check_source(source, name)
    return [
        (f.code, f.span.line, f.message) for f in found if f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def fixture(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_sink_logit_is_no_stale_max_but_a_score_block_against_the_old_max_is() -> None:
    src = fixture("attention_sink.py")
    assert serious(src, "attention_sink.py") == []
    stale = src.replace(
        "p = tl.exp(s - m_use[:, None])", "p = tl.exp(s - tl.where(m_i == float('-inf'), 0.0, m_i)[:, None])"
    )
    assert stale != src
    found = serious(stale, "attention_sink.py")
    assert ("NU002", line_of(stale, "p = tl.exp(s - tl.where")) in [(c, ln) for c, ln, _ in found], found


def test_the_sink_against_an_empty_max_is_fine_but_scores_against_it_are_not() -> None:
    # the running max never updated: every block is read against -inf (clamped to 0)
    src = fixture("attention_sink.py").replace("m_i = m_new\n", "m_i = m_i\n")
    found = serious(src, "attention_sink.py")
    assert any(code == "NU002" for code, _, _ in found), found


TRANSPOSED = """
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, M, N, B: tl.constexpr):
    pid_m, pid_n = tl.program_id(0).to(tl.int64), tl.program_id(1).to(tl.int64)
    rows = pid_m * B + tl.arange(0, B)
    cols = pid_n * B + tl.arange(0, B)
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=ok, other=0.0)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tl.trans(x), mask=ok)


def copy(x):
    M, N = x.shape
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, B=16)
    return out
"""


def test_chunk_local_scores_with_unknown_rows_are_not_transposed() -> None:
    assert serious(fixture("chunk_local_scores.py"), "chunk_local_scores.py") == []


def test_a_tile_whose_rows_are_known_stored_transposed_is_still_found() -> None:
    found = serious(TRANSPOSED, "transposed.py")
    assert ("DF004", line_of(TRANSPOSED, "tl.trans(x)")) in [(c, ln) for c, ln, _ in found], found


def test_a_backward_chunk_loop_is_no_stale_pointer() -> None:
    found = serious(fixture("reverse_chunks.py"), "reverse_chunks.py")
    assert not [f for f in found if f[0] == "DF002"], found


def test_a_backward_loop_whose_rows_do_not_move_is_still_found() -> None:
    src = fixture("reverse_chunks.py").replace(
        "rows = c * CHUNK + tl.arange(0, CHUNK)", "rows = tl.arange(0, CHUNK)"
    )
    found = serious(src, "reverse_chunks.py")
    assert any(code in ("DF002", "DF003") for code, _, _ in found), found


def test_whole_contractions_summed_over_a_loop_are_counted_once() -> None:
    assert serious(fixture("whole_contraction_summed.py"), "whole_contraction_summed.py") == []


def _cover(counts: list[int]) -> dict:
    return {"counts": np.asarray(counts), "key": "K", "loop": None, "direct": True}


def test_merging_coverage_adds_partial_tiles_and_keeps_whole_ones() -> None:
    assert merge_cover(_cover([1, 1, 1, 1]), _cover([1, 1, 1, 1]))["counts"].tolist() == [1, 1, 1, 1]
    assert merge_cover(_cover([1, 1, 0, 0]), _cover([1, 1, 0, 0]))["counts"].tolist() == [2, 2, 0, 0]
    assert merge_cover(_cover([1, 1, 1, 1]), _cover([1, 1, 0, 0]))["counts"].tolist() == [2, 2, 1, 1]
    assert merge_cover(_cover([1, 1, 0, 0]), _cover([0, 0, 1, 1]))["counts"].tolist() == [1, 1, 1, 1]


def test_a_backward_loop_that_drops_the_partial_chunk_is_still_found() -> None:
    src = fixture("reverse_chunks.py")
    assert serious(src, "reverse_chunks.py") == []
    short = src.replace("range(n_chunks - 1, -1, -1)", "range(T // CHUNK - 1, -1, -1)")
    found = serious(short, "reverse_chunks.py")
    assert any(code == "DF003" and "out_ptr" in msg for code, _, msg in found), found


def test_nested_prefix_states_are_not_a_skipped_reduction_but_a_dropped_chunk_is() -> None:
    src = fixture("nested_prefix_state.py")
    assert serious(src, "nested_prefix_state.py") == []
    dropped = src.replace("for c in range(n_chunks):", "for c in range(T // CHUNK):")
    found = serious(dropped, "nested_prefix_state.py")
    assert any(code == "DF003" and "final_ptr" in msg for code, _, msg in found), found


GATED_NORM = """
import torch
import triton
import triton.language as tl


@triton.jit
def gated_norm_kernel(h_ptr, g_ptr, out_ptr, K: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    o_k = tl.arange(0, K)
    decay = tl.exp(tl.load(g_ptr + i))
    h = tl.load(h_ptr + i * K + o_k) * decay
    tl.store(out_ptr + i * K + o_k, h / tl.sum(h, axis=0))


def gated_norm(h, g):
    B, K = h.shape
    assert g.shape == (B,)
    out = torch.empty_like(h)
    gated_norm_kernel[(B,)](h, g, out, K=K)
    return out
"""


def test_the_exp_of_a_scalar_gate_is_no_unstable_softmax_but_a_tile_is() -> None:
    # cause K2b (fla mesa_net decoding_one_step): `exp(g)` of a per-head log-decay scales a
    # state whose sum normalizes; a 0-d exp is no row of scores
    assert serious(GATED_NORM, "gated_norm.py") == []
    tile = GATED_NORM.replace("tl.exp(tl.load(g_ptr + i))", "1.0").replace(
        "h = tl.load(h_ptr + i * K + o_k) * decay", "h = tl.exp(tl.load(h_ptr + i * K + o_k)) * decay"
    )
    found = serious(tile, "gated_norm.py")
    assert ("NU003", line_of(tile, "h = tl.exp(")) in [(c, ln) for c, ln, _ in found], found
