"""Sglang causes (fourteenth session). An ordering the launcher asserts between sizes (`assert vocab_size <= world * shard_width`,
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



_ROW_COPY = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_copy(x_ptr, y_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, D)
    tl.store(y_ptr + row * D + offs + 1, tl.load(x_ptr + row * D + offs))


def run(x: torch.Tensor):
    rows, D = x.shape
    assert {test}
    y = torch.empty_like(x)
    row_copy[(rows,)](x, y, D=D)
"""


def test_an_ordering_no_nearby_size_keeps_leaves_findings_as_hints_naming_it() -> None:
    # the search moves sizes up: `D < 2` is kept by none of them (a tile needs 16 lanes)
    findings = check_source(_ROW_COPY.format(test="D < 2"), "rows.py")
    bounds = [f for f in findings if f.code == "MB002"]
    assert bounds and all(not f.severity.fails_check and "`assert D < 2`" in f.message for f in bounds)
    # one the search satisfies (`D >= 100000` solved directly) is judged at those sizes
    assert "MB002" in {f.code for f in check_source(_ROW_COPY.format(test="D >= 100000"), "rows.py") if f.severity.fails_check}


_INPLACE_AXIS = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_rows(o_ptr, x_ptr, n, E: tl.constexpr, E_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)  # one feature block: E_BLOCK == E
    offs = blk * E_BLOCK + tl.arange(0, E_BLOCK)
    o = tl.load(o_ptr + row * E + offs)
    tl.store(o_ptr + row * E + offs, o + tl.load(x_ptr + row * E + offs))


def run(o: torch.Tensor, x: torch.Tensor, blocks: int = 1):
    n, E = o.shape
    add_rows[(n,)](o, x, n, E=E, E_BLOCK=E // blocks)
"""


def test_a_missing_grid_axis_is_harmless_where_every_element_of_an_in_place_output_is_written() -> None:
    # (sglang's lightning attention reads `program_id(2)` for its one feature block: GR003 stood
    # wherever no output had to be written whole, an in-place one included)
    assert "GR003" not in {f.code for f in check_source(_INPLACE_AXIS, "rows.py")}
    # two feature blocks and still no axis for them: half of every row is never updated
    two = _INPLACE_AXIS.replace("blocks: int = 1", "blocks: int = 2")
    assert "GR003" in {f.code for f in check_source(two, "rows.py") if f.severity.fails_check}


_TOKEN_ROWS = """
import torch
import triton
import triton.language as tl


@triton.jit
def copy_tokens(key_ptr, out_ptr, key_stride, H, D: tl.constexpr, HB: tl.constexpr, BD: tl.constexpr):
    t = tl.program_id(0)
    heads = tl.arange(0, HB)
    d = tl.arange(0, BD)
    offs = heads[:, None] * D + d[None, :]  # each token's heads contiguous
    mask = (heads[:, None] < H) & (d[None, :] < D)
    x = tl.load(key_ptr + {row} + offs, mask=mask)
    tl.store(out_ptr + t * H * D + offs, x, mask=mask)


def run(key: torch.Tensor):
    T, H, D = key.shape
    out = torch.empty((T, H, D), device=key.device, dtype=key.dtype)
    copy_tokens[(T,)](key, out, key.stride(0), H, D=D, HB=triton.next_power_of_2(H), BD=triton.next_power_of_2(D))
    return out
"""


def test_a_padded_probe_gaps_only_the_dimension_whose_stride_the_launch_passes() -> None:
    # (sglang's reshape_and_cache_flash passes `key.stride(0)` and reads each token's heads as
    # contiguous, as a key sliced from a fused projection has them: the gap goes between tokens)
    assert "MB001" not in {f.code for f in check_source(_TOKEN_ROWS.format(row="t * key_stride"), "k.py") if f.severity.fails_check}
    # a kernel that ignores the stride it is given reads the wrong rows of a padded key
    found = {f.code for f in check_source(_TOKEN_ROWS.format(row="t * H * D"), "k.py") if f.severity.fails_check}
    assert found & {"MB001", "DF004"}, found


_GATE = """
import torch
import triton
import triton.language as tl

_HC = 4
_HIDDEN = 256


@triton.jit
def gate_value(gate_ptr, value_ptr, out_ptr, n, HC: tl.constexpr, HIDDEN: tl.constexpr):
    group = tl.program_id(0)
    token = group // HC
    hidden = tl.arange(0, HIDDEN)
    mask = token < n
    g = tl.load(gate_ptr + {gate_index}).to(tl.float32)
    v = tl.load(value_ptr + token * HIDDEN + hidden, mask=mask, other=0.0)
    tl.store(out_ptr + group * HIDDEN + hidden, tl.sigmoid(g) * v, mask=mask)


def can_fuse(gate: torch.Tensor, value: torch.Tensor) -> bool:
    return gate.is_cuda and gate.dim() == 3 and gate.shape[1:] == (_HC, 1) and value.shape == (gate.shape[0], _HIDDEN)


def fused(gate: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    {check}
    out = torch.empty((gate.shape[0], _HC, _HIDDEN), dtype=value.dtype, device=value.device)
    gate_value[(gate.shape[0] * _HC,)](gate, value, out, gate.shape[0], HC=_HC, HIDDEN=_HIDDEN)
    return out
"""

_CHECK = "if not can_fuse(gate, value):\n        raise ValueError('unsupported')"


def test_the_ranks_a_refusing_predicate_returns_are_the_launchs() -> None:
    # (sglang's Qwen4 gate: `gate.dim() == 3 and gate.shape[1:] == (4, 1)` inside the predicate;
    # without it the launcher reads only `gate.shape[0]` and a rank of 1 was guessed)
    clean = _GATE.format(gate_index="group", check=_CHECK)
    assert {f.code for f in check_source(clean, "gate.py") if f.severity.fails_check and f.code != "MB003"} == set()
    # one element too far is still read past the (n, 4, 1) gate at the last group
    wrong = _GATE.format(gate_index="group + 1", check=_CHECK)
    assert "MB001" in {f.code for f in check_source(wrong, "gate.py") if f.severity.fails_check}
