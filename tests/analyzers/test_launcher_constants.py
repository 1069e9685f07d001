"""Launcher settings real packages keep outside the launch call (issue 12, item 3): module
constants (`torch_to_triton_dtype[X.dtype]`, `_str_to_mode["sum"]` of `tl.constexpr` values),
a dict filled before a `**kernel_args` spread, `if n > BLOCK: raise` guards, and autotune
configs built over a module list chosen by machine (`[32, 64] if big_smem() else [16, 32]`).

Each binding case: the correct kernel is clean without AR001, the same kernel with a seeded
off-by-one mask is found; each refusal: the probe that breaks the launcher's own check is no
launch (an AR001 naming the check), never a finding."""

from __future__ import annotations

import ast

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import DimClasses, SymInt
from argus.analyzers.model.kernel import expand_configs
from argus.analyzers.model.launcher_reads import tensor_param_ranks, unguarded_tensor_uses

KERNEL = """
import torch
import triton
import triton.language as tl
from elsewhere import IS_AMD, big_smem, make_out, pick_key, pick_mode  # not followed (a name bound nowhere is AR002)
{prelude}

@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_x, stride_y, D, OUT_DTYPE: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < {bound}
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    if MODE == 1:
        x = x * 2.0
    tl.store(y_ptr + row * stride_y + cols, x.to(OUT_DTYPE), mask=mask)


def launch(x):
    T, D = x.shape
    y = torch.empty_like(x)
{body}
    return y
"""

DTYPES = """
_TO_TL = {torch.float32: tl.float32, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}
_MODE_SUM: tl.constexpr = tl.constexpr(1)
_MODES = {"none": 0, "sum": _MODE_SUM.value}
"""

CONSTANTS_LAUNCH = """    x = x.to(torch.float32)
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, _TO_TL[x.dtype], _MODES["sum"], BLOCK=triton.next_power_of_2(D))"""

SPREAD_LAUNCH = """    extra = {}
    extra["BLOCK"] = triton.next_power_of_2(D)
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, **extra)"""

CASES = {"constants": (DTYPES, CONSTANTS_LAUNCH), "dict-spread": ("", SPREAD_LAUNCH)}


def _source(prelude: str, body: str, bound: str = "D") -> str:
    return KERNEL.format(prelude=prelude, body=body, bound=bound)


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


@pytest.mark.parametrize("case", list(CASES))
def test_the_settings_bind_and_a_correct_kernel_is_clean(case: str) -> None:
    findings = check_source(_source(*CASES[case]), "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []


@pytest.mark.parametrize("case", list(CASES))
def test_an_off_by_one_mask_is_found_through_the_settings(case: str) -> None:
    findings = check_source(_source(*CASES[case], bound="D + 1"), "rows.py")
    assert {f.code for f in _errors(findings)} & {"MB001", "MB002"}, [f.message for f in findings]


def test_a_dict_entry_under_an_unknown_key_leaves_the_spread_unknown() -> None:
    body = SPREAD_LAUNCH.replace('extra["BLOCK"]', "extra[pick_key()]")
    notes = [f.message for f in check_source(_source("", body), "rows.py") if f.code == "AR001"]
    assert any("**kwargs launch" in m for m in notes), notes


def _refused(code: str, sizes: dict[str, int]) -> list:
    ev = HostEval(DimClasses(), sizes, recording=False)
    for name, value in sizes.items():
        ev.env[name] = SymInt(value, name)
    ev.env["x"] = ev.new_tensor([ev.dim("D")], "fp32", "x", True)
    ev.run_block(ast.parse(code).body)
    return ev.broken_asserts


def test_a_probe_the_launcher_raises_on_is_no_launch() -> None:
    # `if n_cols > BLOCK_SIZE: raise` (liger's rms_norm backward): a probe with D > BLOCK would
    # be judged on a launch that never happens (columns past BLOCK "never written")
    guard = "if D > BLOCK:\n    raise RuntimeError('row too wide')\n"
    assert len(_refused(guard, {"D": 20, "BLOCK": 16})) == 1
    assert _refused(guard, {"D": 9, "BLOCK": 16}) == []
    # a raise under a test of something else than sizes refuses nothing
    assert _refused("if x.dtype == torch.float16:\n    raise TypeError('no fp16')\n", {"D": 9}) == []


def test_the_refusal_is_named_in_the_note() -> None:
    src = _source("", "").replace(
        "def launch(x):\n    T, D = x.shape\n    y = torch.empty_like(x)\n",
        "def launch(x):\n    T, D = x.shape\n    y = torch.empty_like(x)\n"
        "    if D > 4:\n        raise ValueError('row too wide')\n"
        "    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, BLOCK=4)\n",
    )
    findings = check_source(src, "rows.py")
    assert _errors(findings) == [], [f.message for f in findings]
    notes = [f.message for f in findings if f.code == "AR001"]
    assert notes and all("`if D > 4: raise`" in m for m in notes), notes


def test_a_raise_on_something_other_than_sizes_does_not_refuse_the_probe() -> None:
    src = _source("", SPREAD_LAUNCH).replace(
        "    extra = {}\n", "    if x.dtype == torch.float64:\n        raise TypeError('no fp64')\n    extra = {}\n"
    )
    findings = check_source(src, "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []


def _configs(module: str) -> list[dict]:
    tree = ast.parse(module)
    consts = {
        st.targets[0].id: st.value
        for st in tree.body
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name)
    }
    comp = ast.parse("[triton.Config({'BK': bk}, num_warps=4) for bk in SIZES]", mode="eval").body
    return expand_configs(comp, consts)


def test_configs_over_a_module_list_chosen_by_machine_take_both_lists() -> None:
    found = _configs("SIZES = [32, 64] if big_smem() else [16, 32]\n")
    assert [c["BK"] for c in found] == [32, 64, 16]


def test_configs_over_a_module_list_are_expanded() -> None:
    assert [c["BK"] for c in _configs("SIZES = [16, 32]\n")] == [16, 32]
    assert _configs("SIZES = sizes_from_yaml()\n") == []  # not known: no configs, never invented


def _unguarded(src: str) -> set[str]:
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    return unguarded_tensor_uses(func)


def test_a_none_default_used_as_a_tensor_unguarded_is_a_tensor() -> None:
    # fla's `beta: Tensor | None = None` then `B, T, H, K, HV = *k.shape, beta.shape[2]`
    assert _unguarded("def f(k, beta=None):\n    HV = beta.shape[2]\n") == {"beta"}
    # a use under a test of the name may be skipped: None stays a possible value
    assert _unguarded("def f(g=None):\n    if g is not None:\n        n = g.shape[0]\n") == set()
    assert _unguarded("def f(g=None):\n    n = g.numel() if g is not None else 0\n") == set()
    assert _unguarded("def f(g=None):\n    ok = g is None or g.is_contiguous()\n") == set()


def test_the_launch_binds_through_a_none_default_read_as_a_tensor() -> None:
    body = "    s = w.shape[0]\n    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), s, tl.float16, 0, BLOCK=triton.next_power_of_2(s))"
    src = _source("", body).replace("def launch(x):", "def launch(x, w=None):")
    findings = check_source(src, "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []


# ---- machine branches, tensor indexing, tensors handed on ------------------------------------

def test_a_branch_on_the_machine_takes_its_first_side() -> None:
    # fla's `if check_shared_mem('hopper', q.device.index): BV = ... elif ...: ... else: ...`
    body = (
        "    if big_smem(x.device.index):\n        BLOCK = triton.next_power_of_2(D)\n"
        "    elif IS_AMD:\n        BLOCK = 2 * triton.next_power_of_2(D)\n    else:\n        BLOCK = 16\n"
        "    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, BLOCK=BLOCK)"
    )
    findings = check_source(_source("", body), "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []
    assert {f.code for f in _errors(check_source(_source("", body, bound="D + 1"), "rows.py"))} & {"MB001", "MB002"}


def test_a_branch_on_a_launcher_value_stays_undecided() -> None:
    # `mode` is the caller's opaque choice, not the machine: no side is taken
    body = (
        "    mode = pick_mode(x)\n    if mode.fast:\n        BLOCK = triton.next_power_of_2(D)\n"
        "    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, BLOCK=BLOCK)"
    )
    notes = [f.message for f in check_source(_source("", body), "rows.py") if f.code == "AR001"]
    assert any("BLOCK" in m for m in notes), notes


@pytest.mark.parametrize(
    ("index", "shape"),
    [("o[..., 0]", [2, 3]), ("o[:, 0]", [2, 4]), ("o[0]", [3, 4]), ("o[None]", [1, 2, 3, 4])],
)
def test_a_tensor_index_at_the_first_element_is_a_view(index: str, shape: list[int]) -> None:
    ev = HostEval(DimClasses(), {}, recording=False)
    ev.env["o"] = ev.new_tensor([2, 3, 4], "fp32", "o", True)
    v = ev.expr(ast.parse(index, mode="eval").body)
    assert v.shape == shape


@pytest.mark.parametrize("index", ["o[..., 1]", "o[1:3]", "o[idx]", "o[0, 0, 0, 0]", "o[5:]"])
def test_other_tensor_indices_are_opaque(index: str) -> None:
    ev = HostEval(DimClasses(), {}, recording=False)
    ev.env["o"] = ev.new_tensor([2, 3, 4], "fp32", "o", True)
    assert not hasattr(ev.expr(ast.parse(index, mode="eval").body), "shape")


@pytest.mark.parametrize(("index", "shape"), [("o[1:]", [1, 3, 4]), ("o[:, -2:]", [2, 2, 4]), ("o[-9:]", [2, 3, 4])])
def test_a_slice_to_the_end_is_a_view_of_a_storage_of_its_own(index: str, shape: list[int]) -> None:
    """(cov6) It starts past the first element: its extent is known, how it overlaps `o` is
    not followed (a storage of its own), so no race or alias verdict rests on the offset."""
    ev = HostEval(DimClasses(), {}, recording=False)
    o = ev.env["o"] = ev.new_tensor([2, 3, 4], "fp32", "o", True)
    v = ev.expr(ast.parse(index, mode="eval").body)
    assert v.shape == shape and v.strides == o.strides
    assert v.storage != o.storage


def test_a_tensor_handed_on_to_a_host_function_is_a_tensor_of_unknown_extent() -> None:
    helpers = "\n\ndef out_like(x):\n    return torch.empty_like(x[..., 0])\n"
    body = "    out = out_like(w)\n    rows_kernel[(T,)](x, out, x.stride(0), 1, D, tl.float16, 0, BLOCK=triton.next_power_of_2(D))"
    src = _source(helpers, body).replace("def launch(x):", "def launch(x, w):")
    findings = check_source(src, "rows.py")
    # bound (no AR001 for `out`), and its extent is not judged: w's rank is the launcher's guess
    assert not [f.message for f in findings if f.code == "AR001" and "passed as" in f.message]
    assert _errors(findings) == []
    # a store past the probe buffer of that unsized tensor is not tracked (it was an IndexError)
    assert not [f.message for f in findings if "internal" in f.message]
    # a helper not in the file: `out` is an unsized stand-in (unsized_args.py), the rest of the
    # launch is judged and nothing rests on out's extent
    alone = check_source(src.replace("out = out_like(w)", "out = make_out(w)"), "rows.py")
    assert not [f.message for f in alone if f.code == "AR001" and "passed as" in f.message]
    assert _errors(alone) == []


def test_a_rank_bounded_only_from_below_is_unknown() -> None:
    func = ast.parse("def f(q, k):\n    HQ = q.shape[2]\n    M, N = k.shape[0], k.shape[1]\n").body[0]
    assert isinstance(func, ast.FunctionDef)
    at_least: set[str] = set()
    ranks = tensor_param_ranks(func, set(), at_least)
    assert ranks == {"q": 3, "k": 2}
    assert at_least == {"q"}  # k names every dimension up to the last one read


def test_a_none_default_the_launcher_binds_again_stays_possible() -> None:
    src = "def f(x, out=None):\n    if out is None:\n        out = torch.empty_like(x)\n    s = out.stride(0)\n"
    assert _unguarded(src) == set()


def test_a_refusal_of_unequal_sizes_relates_them_like_an_assert() -> None:
    # liger's layer_norm: `if X.shape[1] != W.shape[0]: raise ValueError(...)`
    body = (
        "    if x.shape[1] != w.shape[0]:\n        raise ValueError('width')\n"
        "    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, BLOCK=triton.next_power_of_2(D))"
    )
    src = _source("", body).replace("def launch(x):", "def launch(x, w):")
    findings = check_source(src, "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []


def test_a_machine_branch_whose_side_is_unknown_keeps_the_known_alternative() -> None:
    # liger's rms_norm backward: `sm_count = 1; if X.device.type == "cuda": sm_count = <device query>`
    body = (
        "    progs = 1\n    if x.device.type == 'cuda':\n"
        "        progs = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
        "    rows_kernel[(T * progs,)](x, y, x.stride(0), y.stride(0), D, tl.float16, 0, BLOCK=triton.next_power_of_2(D))"
    )
    findings = check_source(_source("", body), "rows.py")
    assert [f.message for f in findings if f.code == "AR001"] == []


def test_a_launch_in_a_loop_is_its_first_iterations() -> None:
    # fla's Ascend launchers: `for off in range(0, tasks, step): kw["TASK_OFFSET"] = off; k[...](**kw)`
    ev = HostEval(DimClasses(), {}, recording=False)
    code = "for off in range(3, 10, 2):\n    seen = off\n    launch()\n"
    tree = ast.parse(code)
    call = tree.body[0].body[1].value  # type: ignore[attr-defined]
    ev.run_block(tree.body, call)
    assert ev.env["off"] == 3 and ev.env["seen"] == 3
    for loop in ["for off in range(0, n, 0):\n", "for off in pick():\n"]:
        ev = HostEval(DimClasses(), {}, recording=False)
        tree = ast.parse(loop + "    launch()\n")
        ev.run_block(tree.body, tree.body[0].body[0].value)  # type: ignore[attr-defined]
        assert not isinstance(ev.env["off"], int)
