"""An ordering the launcher asserts between sizes (`assert vocab_size <= world * shard_width`,
sglang's gathered softcap) is a launch it refuses where the probe's sizes break it: the probe
moves to sizes the launcher accepts (assert_search.py), and a real bug is still found there."""

from __future__ import annotations

from argus.analyzers import check_source

_GATHER = """
import torch
import triton
import triton.language as tl


@triton.jit
def gather_k(g_ptr, out_ptr, T, W, V, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < {bound}
    shard = cols // W
    x = tl.load(g_ptr + (shard * T + row) * W + cols - shard * W, mask=mask)
    tl.store(out_ptr + row * V + cols, x, mask=mask)


def run(g: torch.Tensor, out: torch.Tensor):
    world, T, W = g.shape
    V = out.shape[1]
    assert out.shape[0] == T and V <= world * W
    gather_k[(triton.cdiv(V, 256), T)](g, out, T, W, V, BLOCK=256)
"""


def _codes(src: str) -> set[str]:
    return {f.code for f in check_source(src, "gather.py") if f.severity.fails_check and f.code != "MB003"}


def test_a_probe_breaking_an_asserted_ordering_is_not_a_launch() -> None:
    assert _codes(_GATHER.format(bound="V")) == set()


def test_a_mask_one_past_the_end_is_found_at_sizes_the_assert_accepts() -> None:
    assert "MB001" in _codes(_GATHER.format(bound="V + 1"))

