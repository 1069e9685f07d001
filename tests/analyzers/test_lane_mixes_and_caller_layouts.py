"""Four causes of false findings met on torchao's and bitsandbytes' quantization kernels
(fourteenth session):

- a value mixed from two lanes (a Hadamard butterfly's `tl.where(left, x + p, p - x)`) carries
  the coordinates of both, under either key per lane: DF004 asks that one of them be the
  destination's in every lane, not that the same key be it in all lanes;
- an internal launcher that addresses a fresh output with its input's strides is wrong for a
  padded input, but not when every caller in the module makes the input contiguous first;
- a launcher helper's `while` loop whose test the probe's sizes decide (`log2` of a head
  dimension) runs, so the constexpr it computes is the launch's, not a stand-in;
- zero padding never wins a max over values that are never negative by their form
  (`tl.max(tl.abs(x))`), whatever the probe's data holds.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_MIX = """
import torch
import triton
import triton.language as tl


@triton.jit
def pair_mix(x_ptr, y_ptr, n_rows, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    partner = d ^ 1
    x = tl.load(x_ptr + row * D + d)
    p = tl.load(x_ptr + row * D + partner)
    out = {value}
    tl.store(y_ptr + row * D + d, out)


def run(x: torch.Tensor):
    n_rows, D = x.shape
    y = torch.empty_like(x)
    pair_mix[(n_rows,)](x, y, n_rows, D=D)
    return y
"""


def _failing(src: str, path: str = "k.py") -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in check_source(src, path) if f.severity.fails_check and f.code != "MB003"]


def test_a_butterfly_mixing_each_lane_with_its_partner_stores_its_own_lane() -> None:
    assert _failing(_MIX.format(value="tl.where((d & 1) == 0, x + p, p - x)")) == []


def test_a_store_of_the_partners_value_alone_is_still_a_tag_mismatch() -> None:
    found = _failing(_MIX.format(value="p"))
    assert [c for c, _ in found] == ["DF004"], found


_CHUNKS = """
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_copy(x_ptr, out_ptr, stride_b, stride_s, stride_d, S, D, chunk, BLOCK: tl.constexpr):
    pid_b = tl.program_id(0).to(tl.int64)
    pid_c = tl.program_id(1)
    s_start = pid_c * chunk
    s_end = tl.minimum(s_start + chunk, S)
    n = (s_end - s_start) * D
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        s_idx = s_start + offs // D
        d_idx = offs % D
        at = pid_b * stride_b + s_idx.to(tl.int64) * stride_s + d_idx * stride_d
        tl.store(out_ptr + at, tl.load(x_ptr + at, mask=mask), mask=mask)


def _copy(x: torch.Tensor, chunks: int):
    B, S, D = x.shape
    out = torch.empty_like(x)
    chunk = (S + chunks - 1) // chunks
    chunk_copy[(B, chunks)](x, out, x.stride(0), x.stride(1), x.stride(2), S, D, chunk, BLOCK=256)
    return out
"""


def test_a_fresh_output_addressed_with_a_padded_inputs_strides_is_found() -> None:
    found = {c for c, _ in _failing(_CHUNKS)}
    assert found & {"MB002", "DF004"}, found


def test_callers_that_make_the_input_contiguous_leave_the_padded_layout_out() -> None:
    entry = "\n\ndef copy(x, chunks=4):\n    if not x.is_contiguous():\n        x = x.contiguous()\n    return _copy(x, chunks)\n"
    assert _failing(_CHUNKS + entry) == []
    passed = "\n\ndef copy(x, chunks=4):\n    return _copy(x.contiguous(), chunks)\n"
    assert _failing(_CHUNKS + passed) == []


def test_a_caller_that_does_not_make_it_contiguous_keeps_the_finding() -> None:
    other = "\n\ndef copy(x, chunks=4):\n    x = x.float()\n    return _copy(x, chunks)\n"
    assert {c for c, _ in _failing(_CHUNKS + other)} & {"MB002", "DF004"}
    # one caller of two is enough for the padded launch to be one the code can make
    two = (
        "\n\ndef copy(x, chunks=4):\n    return _copy(x.contiguous(), chunks)\n"
        "\n\ndef copy_view(x, chunks=4):\n    return _copy(x, chunks)\n"
    )
    assert {c for c, _ in _failing(_CHUNKS + two)} & {"MB002", "DF004"}
    # made contiguous, then assigned again before the call
    again = "\n\ndef copy(x, chunks=4):\n    x = x.contiguous()\n    x = x[:, ::2]\n    return _copy(x, chunks)\n"
    assert {c for c, _ in _failing(_CHUNKS + again)} & {"MB002", "DF004"}


_LOG2 = """
import torch
import triton
import triton.language as tl


def _log2(n: int) -> int:
    out = 0
    t = n
    while t > 1:
        t >>= 1
        out += 1
    return out


@triton.jit
def stages(x_ptr, y_ptr, D: tl.constexpr, LOG2_D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    x = tl.load(x_ptr + row * D + d)
    for s in tl.static_range(LOG2_D):
        x = x + tl.load(x_ptr + row * D + (d ^ (1 << s)))
    tl.store(y_ptr + row * D + d, x)


def run(x: torch.Tensor):
    rows, D = x.shape
    assert D % 2 == 0
    y = torch.empty_like(x)
    stages[(rows,)](x, y, D=D, LOG2_D=_log2(D))
    return y
"""


def test_a_while_loop_the_probe_sizes_decide_gives_the_launch_its_constexpr() -> None:
    findings = check_source(_LOG2, "k.py")
    assert [f for f in findings if f.code == "AR001"] == [], [f.message for f in findings]
    assert [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)] == []
    # the same loop bound one stage too far reads past the row: found through the loop's value
    wrong = _LOG2.replace("LOG2_D=_log2(D))", "LOG2_D=_log2(D) + 1)")
    assert {f.code for f in check_source(wrong, "k.py") if f.severity.fails_check} & {"MB001"}


_BLOCK_MAX = """
import torch
import triton
import triton.language as tl


@triton.jit
def block_absmax(a_ptr, out_ptr, n, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    start = tl.program_id(0) * ROWS
    offs = start * BLOCK + tl.arange(0, ROWS * BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0.0)
    m = tl.max({operand}, axis=1)
    rows = start + tl.arange(0, ROWS)
    tl.store(out_ptr + rows, m, mask=rows < tl.cdiv(n, BLOCK))


def run(a: torch.Tensor, block: int = 64):
    n = a.numel()
    out = torch.empty(triton.cdiv(n, block), device=a.device, dtype=torch.float32)
    block_absmax[(triton.cdiv(n, block * 4),)](a, out, n, BLOCK=block, ROWS=4)
    return out
"""


def test_zero_padding_of_a_max_over_absolute_values_never_wins() -> None:
    # (bitsandbytes' 4-bit quantizers take each block's absmax of a tile padded with 0; over
    # integer data the probe's values tie with the padding, which a max leaves as it is)
    for operand in ("tl.abs(tl.reshape(a, (ROWS, BLOCK)))", "tl.abs(tl.reshape(a, (ROWS, BLOCK)).to(tl.int32))"):
        assert [c for c, _ in _failing(_BLOCK_MAX.format(operand=operand))] == [], operand


def test_zero_padding_of_a_max_over_signed_values_is_still_found() -> None:
    found = _failing(_BLOCK_MAX.format(operand="tl.reshape(a, (ROWS, BLOCK))"))
    assert "DF003" in {c for c, _ in found}, found


_UNMASKED_K = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_sums(b_ptr, out_ptr, N, K, BLOCK_K: tl.constexpr):
    n = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K) * BLOCK_K, BLOCK_K):
        acc += tl.load(b_ptr + n * K + k0 + tl.arange(0, BLOCK_K))  # no K mask: K % 128 == 0
    tl.store(out_ptr + n, tl.sum(acc))


def _sums(b: torch.Tensor):
    N, K = b.shape
    out = torch.empty(N, device=b.device, dtype=torch.float32)
    row_sums[(N,)](b, out, N, K, BLOCK_K=128)
    return out
"""

_PREDICATE = """

def can_use(b):
    N, K = b.shape
    if K % 128 or N < 1:
        return False
    return True


def sums(b):
    if can_use(b) and b.is_cuda:
        return _sums(b)
    return b.float().sum(-1)
"""


def test_a_launch_only_under_a_predicate_that_refuses_the_size_is_not_judged_on_other_sizes() -> None:
    # (unsloth's fused small-M fp8 GEMM: every call sits under `if can_use_fp8_block_small_m(...)`)
    assert [c for c, _ in _failing(_UNMASKED_K + _PREDICATE)] == []
    unguarded = _PREDICATE.replace("if can_use(b) and b.is_cuda:", "if b.is_cuda:")
    assert "MB001" in {c for c, _ in _failing(_UNMASKED_K + unguarded)}


_TAKE = """
import torch
import triton
import triton.language as tl


@triton.jit
def take_rows(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + {source}, mask=mask), mask=mask)


def take(x: torch.Tensor, idx: torch.Tensor):
    n = x.numel()
    assert idx.numel() == n
    out = torch.empty_like(x)
    take_rows[(triton.cdiv(n, 128),)](x, idx, out, n, BLOCK=128)
    return out
"""


def test_a_gather_through_a_loaded_index_stores_each_lanes_own_value() -> None:
    # (sglang's speculative-decoding bonus gathers: `out[i] = predicts[accept_index[i, ...]]`)
    assert _failing(_TAKE.format(source="src")) == []


def test_a_value_read_from_the_next_lane_is_still_a_tag_mismatch() -> None:
    assert "DF004" in {c for c, _ in _failing(_TAKE.format(source="(offs + 1) % n"))}


_TEMPERATURE_MAX = """
import torch
import triton
import triton.language as tl


@triton.jit
def scaled_max(logits_ptr, temps_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    t = tl.load(temps_ptr + row)
    offs = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * V + offs, mask=offs < V, other=-float("inf"))
    x = {scaled}
    tl.store(out_ptr + row, tl.max(x, axis=0))


def run(logits: torch.Tensor, temps: torch.Tensor):
    rows, V = logits.shape
    out = torch.empty(rows, device=logits.device, dtype=torch.float32)
    scaled_max[(rows,)](logits, temps, out, V, BLOCK=triton.next_power_of_2(V))
    return out
"""


def test_padding_divided_by_loaded_data_is_a_hint_naming_that_data() -> None:
    # (sglang's temperature softmax: `-inf / t` is +inf only for a negative temperature)
    found = [f for f in check_source(_TEMPERATURE_MAX.format(scaled="x / t"), "k.py") if f.code == "DF003"]
    assert found and all(not f.severity.fails_check and "`temps_ptr`" in f.message for f in found)


def test_padding_negated_by_the_kernel_itself_is_still_an_error() -> None:
    assert "DF003" in {c for c, _ in _failing(_TEMPERATURE_MAX.format(scaled="-x"))}
