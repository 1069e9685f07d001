"""Launches inside loops of the launcher (issue 12, coverage; model/launch_loops.py): fla's Ascend
launchers split a long axis into chunks with a generator of the package,
`for off, n in iter_chunks(T, step): kernel[(n,)](..., ROW_OFFSET=off)`. The launch is bound
at the loop's first iteration (the generator's first `yield`); what the output's coverage shows
there is at most a hint naming the loop (a later chunk writes the rest); sizes at which the loop
runs no iteration launch nothing and are no probe. Also here: helper values the host evaluator
must not invent (`max(floor, unknown)`), and a persistent kernel's program count."""

from __future__ import annotations

import ast

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_functions import HostFunction
from argus.analyzers.model.host_values import DimClasses, Opaque

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, T, D, ROW_OFFSET, BLOCK: tl.constexpr):
    row = tl.program_id(0) + ROW_OFFSET
    cols = tl.arange(0, BLOCK)
    mask = cols < {bound}
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * D + cols, x * 2.0, mask=mask)


def iter_chunks(total, step):
    for off in range(0, total, step):
        yield off, min(step, total - off)


def double_rows(x):
    T, D = x.shape
    y = torch.empty_like(x)
{body}
    return y
"""

CHUNKED = """    for off, n in iter_chunks(T, {step}):
        rows_kernel[(n,)](x, y, T, D, off, BLOCK=triton.next_power_of_2(D))"""


def _source(bound: str = "D", step: str = "65535", body: str = CHUNKED) -> str:
    return KERNEL.format(bound=bound, body=body.format(step=step))


def _ar001(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_a_launch_in_a_generators_loop_is_bound_at_its_first_yield() -> None:
    findings = check_source(_source(), "rows.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []


def test_an_off_by_one_mask_is_found_in_the_chunked_launch() -> None:
    findings = check_source(_source(bound="D + 1"), "rows.py")
    assert {f.code for f in _errors(findings)} & {"MB001", "MB002"}, [f.message for f in findings]


def test_output_a_later_chunk_writes_is_at_most_a_hint_naming_the_loop() -> None:
    # chunks of half the rows: the first launch leaves the other half of `y` to the second
    findings = check_source(_source(step="triton.cdiv(T, 2)"), "rows.py")
    assert _errors(findings) == []
    gr = [f for f in findings if f.code == "GR001"]
    assert gr and all(f.severity == Severity.HINT and "first iteration" in f.message for f in gr)


def test_the_same_uncovered_output_without_the_loop_is_still_found() -> None:
    body = "    rows_kernel[(triton.cdiv(T, 2),)](x, y, T, D, 0, BLOCK=triton.next_power_of_2(D))"
    findings = check_source(_source(body=body), "rows.py")
    assert "GR001" in {f.code for f in _errors(findings)}, [f.message for f in findings]


def test_sizes_at_which_the_loop_runs_no_iteration_are_no_probe() -> None:
    # `T - 1` rows at the probe of one row: no chunk, no launch, nothing unmodelled
    body = """    for off, n in iter_chunks(T - 1, 65535):
        rows_kernel[(n,)](x, y, T, D, off, BLOCK=triton.next_power_of_2(D))"""
    findings = check_source(_source(body=body), "rows.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []


@pytest.mark.parametrize(
    "generator",
    [
        # the first item is under a `while`: which way its test goes is not followed
        "def iter_chunks(total, step):\n    off = 0\n    while off < total:\n        yield off, step\n        off += step\n",
        # it returns before yielding anything at an unknown condition
        "def iter_chunks(total, step):\n    if total > pick():\n        return\n    yield 0, total\n",
        "def iter_chunks(total, step):\n    yield from other(total)\n",
    ],
    ids=["while", "undecided-return", "yield-from"],
)
def test_a_first_item_the_evaluator_cannot_follow_stays_unknown(generator: str) -> None:
    ev = HostEval(DimClasses(), {}, recording=False)
    node = ast.parse(generator).body[0]
    ev.env["iter_chunks"] = HostFunction(node, {"other": None})  # type: ignore[arg-type]
    tree = ast.parse("for off, n in iter_chunks(12, 4):\n    launch()\n")
    ev.run_block(tree.body, tree.body[0].body[0].value)  # type: ignore[attr-defined]
    assert not isinstance(ev.env.get("off"), int)


def _value(code: str, helpers: str = "") -> object:
    """The value of `v` after running `code` (module helpers `helpers`, `unknown()` opaque)."""
    ev = HostEval(DimClasses(), {}, recording=False)
    if helpers:
        for node in ast.parse(helpers).body:
            ev.env[node.name] = HostFunction(node, {})  # type: ignore[attr-defined,arg-type]
    tree = ast.parse(code)
    ev.run_block(tree.body)
    return ev.env["v"]


def test_max_with_an_unknown_operand_is_unknown_never_the_known_floor() -> None:
    # fla layernorm: `block = max(min_block, block)` of a block the device decides
    assert isinstance(_value("v = max(1, unknown())"), Opaque)
    assert _value("v = max(1, 8)") == 8
    assert _value("v = min(64, unknown())") == 64  # the known side bounds it above (a grid)


PERSISTENT = """
import torch
import triton
import triton.language as tl


@triton.jit
def tasks_kernel(x_ptr, y_ptr, D, task_num, num_core, BLOCK: tl.constexpr):
    core = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for task in tl.range(core, task_num, num_core):
        mask = cols < {bound}
        x = tl.load(x_ptr + task * D + cols, mask=mask, other=0.0)
        tl.store(y_ptr + task * D + cols, x * 2.0, mask=mask)


def device_props():
    return torch.npu.get_device_properties()


def double_rows(x):
    T, D = x.shape
    y = torch.empty_like(x)
    num_core = device_props()["num_aicore"]
    tasks_kernel[(num_core,)](x, y, D, T, num_core, BLOCK=triton.next_power_of_2(D))
    return y
"""


def test_a_persistent_kernels_program_count_is_one_pick_with_its_grid() -> None:
    # fla's Ascend kernels: `num_core` from the device is the grid and the loop's stride
    findings = check_source(PERSISTENT.format(bound="D"), "tasks.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []
    found = _errors(check_source(PERSISTENT.format(bound="D + 1"), "tasks.py"))
    assert {f.code for f in found} & {"MB001", "MB002"}, [f.message for f in found]


def test_the_picked_program_count_gives_each_program_a_few_tasks() -> None:
    from argus.analyzers.model.persistent import persistent_strides, picked_program_count

    func = next(n for n in ast.parse(PERSISTENT.format(bound="D")).body if isinstance(n, ast.FunctionDef))
    strides = persistent_strides(func)  # type: ignore[arg-type]
    assert strides == {"num_core": "task_num"}
    assert picked_program_count("num_core", strides, {"task_num": 2083}, 3) == 521
    assert picked_program_count("num_core", strides, {"task_num": 5}, 3) == 3
    assert picked_program_count("num_core", strides, {}, 3) == 3  # no stop known: the stand-in


SHRUNK = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, buf_ptr, y_ptr, T, s0, s1, s2, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    mask = rows < {bound}
    x = tl.load(x_ptr + rows, mask=mask, other=0.0)
    w = tl.load(buf_ptr + pid * s0 + pid * s1 + pid * s2 + pid)
    tl.store(y_ptr + rows, x * w, mask=mask)


def scale(x, buf):
    (T,) = x.shape
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(T, 64),)](x, buf, y, T, buf.stride(0), buf.stride(1), buf.stride(2), BLOCK=64)
    return y
"""


def test_a_probe_too_large_only_along_unstated_dimensions_is_shrunk() -> None:
    # `buf` is 4-D by its strides and the launcher never states its extents: each was as
    # large as the largest stated size (65), 65**4 elements, past the probe's cap
    findings = check_source(SHRUNK.format(bound="T"), "scale.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []
    found = _errors(check_source(SHRUNK.format(bound="T + 1"), "scale.py"))
    assert {f.code for f in found} & {"MB001", "MB002"}, [f.message for f in found]


LOOPED = """
import torch
import triton
import triton.language as tl


@triton.jit
def mul_kernel(x, g, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < {bound}
    tl.store(x + offs, tl.load(x + offs, mask=mask) * tl.load(g), mask=mask)


def scale_grads(do, dx, dw):
    for grad in (dx, dw):
        if grad is None:
            continue
        N, H = grad.shape
        B = 64
        mul_kernel[(triton.cdiv(N * H, B),)](x=grad, g=do, N=N * H, B=B)
"""


def test_a_loop_over_parameters_reads_each_of_them_through_its_variable() -> None:
    # fla's fused_kl_div: `for grad in (dx, dw): N, H = grad.shape` gives dx (and dw) rank 2
    findings = check_source(LOOPED.format(bound="N"), "grads.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []
    found = _errors(check_source(LOOPED.format(bound="N + 1"), "grads.py"))
    assert {f.code for f in found} & {"MB001", "MB002"}, [f.message for f in found]


@pytest.mark.parametrize(
    ("pattern", "rank", "ranges"),
    [
        ("b t ... -> b t (...)", 4, [(2, 3)]),
        ("b t h d -> b t (h d)", 4, [(2, 3)]),
        ("b t h d -> (b t) h d", 4, [(0, 1)]),
        ("b t d -> b t d", 3, []),
        ("b t h d -> b h t d", 4, None),  # reordered: not a flatten
        ("b t (h d) -> b t h d", 3, None),  # split: needs sizes
        ("b t -> b t 1", 2, None),  # adds an axis
        ("b t ... -> b t (...)", 2, None),  # `(...)` over no axes
    ],
)
def test_rearrange_patterns_that_only_merge_neighbours_are_flattens(pattern: str, rank: int, ranges: object) -> None:
    from argus.analyzers.model.host_einops import flatten_ranges

    assert flatten_ranges(pattern, rank) == ranges


def test_a_rearranged_tensor_keeps_its_shape_through_the_launcher() -> None:
    ev = HostEval(DimClasses(), {}, recording=False)
    from argus.analyzers.model.host_values import HostTensor

    ev.env["x"] = ev.new_tensor([2, 3, 4, 5], "fp16", "x", True)
    ev.run_block(ast.parse("y = rearrange(x, 'b t ... -> b t (...)')\nz = rearrange(x, 'b t h d -> b h t d')").body)
    assert isinstance(ev.env["y"], HostTensor) and ev.env["y"].shape == [2, 3, 20]
    assert isinstance(ev.env["z"], Opaque)


RANKED = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < {bound}
    x = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * D + cols, x * 2.0, mask=mask)


def double_rows(x, D):
    {test}
    T = x.shape[0]
    y = torch.empty_like(x)
    rows_kernel[(T,)](x, y, D, BLOCK=triton.next_power_of_2(D))
    return y
"""


@pytest.mark.parametrize(
    "test",
    ["assert x.ndim == 2", "assert x.dim() == 2, 'rows'", "assert len(x.shape) == 2 and D > 0",
     "if x.dim() != 2:\n        raise ValueError('rows')"],
)
def test_a_rank_the_launcher_asserts_is_the_tensors_rank(test: str) -> None:
    from argus.analyzers.model.launcher_reads import tensor_param_ranks

    def rank(test: str) -> int:
        tree = ast.parse(RANKED.format(bound="D", test=test))
        func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "double_rows")
        return tensor_param_ranks(func)["x"]

    assert rank(test) == 2
    assert rank("pass") == 1  # `x.shape[0]` alone: one dimension known
    # (`x.ndim >= 2` or a rank under `or`: no one rank stated)
    assert rank("assert x.ndim >= 2") == 1
    assert rank("assert x.ndim == 2 or x.ndim == 3") == 1
    assert _errors(check_source(RANKED.format(bound="D", test=test), "rows.py")) == []


PERSISTENT_TASKS = """
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_kernel(x_ptr, y_ptr, T, B, H, task_num, num_core, K: tl.constexpr, BT: tl.constexpr):
    core = tl.program_id(0)
    o_t = tl.arange(0, BT)
    o_k = tl.arange(0, K)
    for task in tl.range(core, task_num, num_core):
        i_t = task // (B * H)
        i_bh = task % (B * H)
        i_b, i_h = i_bh // H, i_bh % H
        rows = i_t * BT + o_t
        mask = rows < {bound}
        offs = ((i_b * T + rows[:, None]) * H + i_h) * K + o_k[None, :]
        x = tl.load(x_ptr + offs, mask=mask[:, None], other=0.0)
        tl.store(y_ptr + offs, x * 2.0, mask=mask[:, None])


def double_chunks(x):
    B, T, H, K = x.shape
    y = torch.empty_like(x)
    NT = triton.cdiv(T, 64)
    num_core = torch.npu.get_device_properties()["num_vectorcore"]
    chunk_kernel[(num_core,)](x, y, T, B, H, NT * B * H, num_core, K=K, BT=64)
    return y
"""


def test_a_persistent_loops_task_count_tiles_and_batches_like_a_grid() -> None:
    # `task_num = NT * B * H`: `B` and `H` count batch and head indices, as in a grid
    # `(NT, B * H)`, and stay small; tiled like `T` they made a probe past the element cap
    findings = check_source(PERSISTENT_TASKS.format(bound="T"), "chunks.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []
    found = _errors(check_source(PERSISTENT_TASKS.format(bound="T + 1"), "chunks.py"))
    assert {f.code for f in found} & {"MB001", "MB002"}, [f.message for f in found]
    sizes = _ragged_sizes(PERSISTENT_TASKS.format(bound="T"))
    assert sizes["B"] < 16 and sizes["H"] < 16 and sizes["T"] > 64, sizes


def _ragged_sizes(source: str) -> dict[str, int]:
    """The ragged probe's sizes of the file's first kernel, bound at its launch."""
    from argus.analyzers.frontend.parse import parse
    from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
    from argus.analyzers.model.launch import LaunchBinder
    from argus.analyzers.module_view import build_module_view

    text = source.encode()
    view = build_module_view(text, parse(text))
    site = view.sites[0]
    func, smap = parse_kernel(view, site)
    setup = set_up_kernel(view, site, func, smap)
    binder = LaunchBinder(setup.kernel, setup.scan, setup.launch_sites[0])
    binder.record()
    return dict(binder.probe("ragged", None).sizes)


GROUPED = """
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_kernel(q_ptr, o_ptr, H, HV, K: tl.constexpr):
    i_hv = tl.program_id(0)
    i_h = i_hv // (HV // H)
    o_k = tl.arange(0, K)
    tl.store(o_ptr + i_hv * K + o_k, tl.load(q_ptr + i_h * K + o_k))


def grouped(q, v):
    H, K = q.shape
    HV = v.shape[0]
    o = torch.empty(HV, K, dtype=q.dtype, device=q.device)
    grouped_kernel[(HV,)](q, o, H, HV, K=K)
    return o
"""


def test_a_kernel_dividing_one_size_by_another_is_probed_with_whole_groups() -> None:
    # `i_h // (HV // H)`: value heads in groups of query heads; HV = 3 with H = 2 reads a head
    # past `q`, at sizes no caller of a grouped-head kernel passes and the launcher never states
    sizes = _ragged_sizes(GROUPED)
    assert sizes["HV"] % sizes["H"] == 0 and sizes["HV"] > sizes["H"], sizes
    assert sizes["HV"] == 2 * sizes["H"], sizes  # two groups: a launcher's own assert takes 2H
    assert _errors(check_source(GROUPED, "grouped.py")) == []
