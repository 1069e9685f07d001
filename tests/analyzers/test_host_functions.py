"""Plain functions the launcher calls (issue 12, item 3): `calculate_settings(n)` of the same
module or of the package's `utils`, a grid size from a helper, module constants. The helper is
evaluated like the launcher, so its value is known where the code establishes it; where it does
not (a return under an unknown condition, a loop, recursion) the value stays unknown.

Each binding case is checked twice: the correct kernel is clean without AR001, and the same
kernel with a seeded off-by-one mask is found, which needs the bound launch (and the helper's
value: with BLOCK stood in by a guess, the tile never reaches the edge)."""

from __future__ import annotations

import pytest
from argus.analyzers import KernelCache, Severity, check_source
from argus.analyzers.project import SourceSet

KERNEL = """
import torch
import triton
import triton.language as tl
{imports}

@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_x, stride_y, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < {bound}
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * 2.0, mask=mask)
{helpers}

def double_rows(x):
    T, D = x.shape
    y = torch.empty_like(x)
{body}
    return y
"""

SETTINGS = """
MAX_FUSED = 65536


def calculate_settings(n):
    BLOCK = triton.next_power_of_2(n)
    if BLOCK > MAX_FUSED:
        raise RuntimeError("row too long")
    num_warps = 4
    if BLOCK >= 2048:
        num_warps = 8
    return BLOCK, num_warps
"""

TUPLE_LAUNCH = """    BLOCK, num_warps = calculate_settings(D)
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=BLOCK, num_warps=num_warps)"""

GRID_HELPER = """

def _grid_size(rows, cores):
    if rows > 4 * cores:
        return min(cores * 2, rows)
    return rows
"""

GRID_LAUNCH = """    g = _grid_size(T, 10**9)
    rows_kernel[(g,)](x, y, x.stride(0), y.stride(0), D, BLOCK=triton.next_power_of_2(D))"""

KWARGS_HELPER = """

def pick(n, *, floor=16, **rest):
    return max(triton.next_power_of_2(n), floor)
"""

KWARGS_LAUNCH = """    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=pick(D, floor=1, extra=2))"""

# keyword-only parameters whose default is None (fla's `_activation_launch_config(T, *,
# memory_multiplier=None)`): a None default is a value the call may leave, not a missing one
KWONLY_NONE_HELPER = """

def launch_config(n, *, floor=None, scale=None):
    if floor is None:
        floor = 16
    return max(triton.next_power_of_2(n), floor)
"""

KWONLY_NONE_LAUNCH = """    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=launch_config(D, floor=1))"""

LOCAL_LAUNCH = """    def block_of(n):
        return triton.next_power_of_2(n)

    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=block_of(D))"""

# `while` steps decided at the probe's concrete size (torchao's `_get_log2_d`): the loop runs
WHILE_HELPER = """

def calculate_settings(n):
    b = 1
    while b < n:
        b *= 2
    return b, 4
"""

CASES = {
    "tuple": ("", SETTINGS, TUPLE_LAUNCH),
    "while": ("", WHILE_HELPER, TUPLE_LAUNCH),
    "grid": ("", GRID_HELPER, GRID_LAUNCH),
    "kwargs": ("", KWARGS_HELPER, KWARGS_LAUNCH),
    "local": ("", "", LOCAL_LAUNCH),
    "kwonly-none": ("", KWONLY_NONE_HELPER, KWONLY_NONE_LAUNCH),
}


def _source(case: str, bound: str) -> str:
    imports, helpers, body = CASES[case]
    return KERNEL.format(imports=imports, helpers=helpers, body=body, bound=bound)


def _ar001(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


@pytest.mark.parametrize("case", list(CASES))
def test_a_helpers_value_binds_the_launch_and_a_correct_kernel_is_clean(case: str) -> None:
    findings = check_source(_source(case, "D"), "rows.py")
    assert _ar001(findings) == []
    assert _errors(findings) == []


@pytest.mark.parametrize("case", list(CASES))
def test_an_off_by_one_mask_is_found_through_the_helpers_value(case: str) -> None:
    findings = check_source(_source(case, "D + 1"), "rows.py")
    assert {f.code for f in _errors(findings)} & {"MB001", "MB002"}, [f.message for f in findings]


@pytest.mark.parametrize(
    "helper",
    [
        # (a value under a test the evaluator cannot decide, every side returning one, is a
        # named pick now: test_unmodelled_launch_args.py)
        # a loop whose test is not decided (an environment read): the value before the loop
        # would be a guess
        "def calculate_settings(n):\n    b = 1\n    while b < int(os.environ.get('B', '64')):\n        b *= 2\n    return b, 4\n",
        # recursion: followed a few levels only, never forever
        "def calculate_settings(n):\n    return calculate_settings(n + 1)\n",
        # the branch taken raises at these sizes: no launch comes back
        "def calculate_settings(n):\n    raise NotImplementedError\n",
    ],
    ids=["loop", "recursion", "raise"],
)
def test_what_the_helper_does_not_establish_stays_unknown(helper: str) -> None:
    src = KERNEL.format(imports="import os\n", helpers="\n\n" + helper, body=TUPLE_LAUNCH, bound="D")
    notes = _ar001(check_source(src, "rows.py"))
    assert any("BLOCK" in m for m in notes), notes


def test_module_constants_are_read_by_the_launcher() -> None:
    body = "    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=ROW_BLOCK)"
    src = KERNEL.format(imports="", helpers="\nROW_BLOCK = 64\n", body=body, bound="D")
    findings = check_source(src, "rows.py")
    assert _ar001(findings) == []
    # a 64-wide tile over rows of D: the probe's D exceeds 64 somewhere, so columns are missed
    assert "GR001" in {f.code for f in findings}


# ---- across modules ---------------------------------------------------------------------------

UTILS = ("import triton\n" + SETTINGS).encode()


def _package(utils: bytes, ops: str) -> tuple[SourceSet, dict[str, bytes]]:
    texts = {
        "/pkg-root/pkg/__init__.py": b"",
        "/pkg-root/pkg/utils.py": utils,
        "/pkg-root/pkg/ops.py": ops.encode(),
    }
    modules = {"pkg": "/pkg-root/pkg/__init__.py", "pkg.utils": "/pkg-root/pkg/utils.py", "pkg.ops": "/pkg-root/pkg/ops.py"}
    return SourceSet(modules, texts.get, lambda p: p[len("/pkg-root/") :]), texts


@pytest.mark.parametrize(
    "imports", ["from .utils import calculate_settings", "from pkg.utils import calculate_settings"]
)
def test_a_helper_of_another_module_of_the_package_is_followed(imports: str) -> None:
    ops = KERNEL.format(imports=imports, helpers="", body=TUPLE_LAUNCH, bound="D")
    project, texts = _package(UTILS, ops)
    path = "/pkg-root/pkg/ops.py"
    assert _ar001(check_source(ops, path)) != []  # alone: the helper is not known
    found = check_source(ops, path, project=project)
    assert _ar001(found) == [] and _errors(found) == []
    buggy = ops.replace("mask = cols < D", "mask = cols < D + 1")
    found = check_source(buggy, path, project=project)
    assert {f.code for f in _errors(found)} & {"MB001", "MB002"}


def test_a_dotted_helper_of_an_imported_module_is_followed() -> None:
    body = TUPLE_LAUNCH.replace("calculate_settings(D)", "utils.calculate_settings(D)")
    ops = KERNEL.format(imports="from pkg import utils", helpers="", body=body, bound="D")
    project, _ = _package(UTILS, ops)
    found = check_source(ops, "/pkg-root/pkg/ops.py", project=project)
    assert _ar001(found) == [] and _errors(found) == []


def test_an_edit_of_the_helper_rechecks_the_kernel() -> None:
    ops = KERNEL.format(imports="from .utils import calculate_settings", helpers="", body=TUPLE_LAUNCH, bound="D")
    path = "/pkg-root/pkg/ops.py"
    cache = KernelCache()
    project, _ = _package(UTILS, ops)
    assert _errors(check_source(ops, path, project=project, cache=cache)) == []
    misses = cache.misses
    assert _errors(check_source(ops, path, project=project, cache=cache)) == []
    assert cache.misses == misses
    # the helper now gives a block smaller than the row: columns past it are never written
    small = UTILS.replace(b"BLOCK = triton.next_power_of_2(n)", b"BLOCK = 2")
    project, _ = _package(small, ops)
    assert "GR001" in {f.code for f in check_source(ops, path, project=project, cache=cache)}


def test_an_edit_of_a_same_file_helper_rechecks_the_kernel() -> None:
    cache = KernelCache()
    src = _source("tuple", "D")
    assert _errors(check_source(src, "rows.py", cache=cache)) == []
    small = src.replace("BLOCK = triton.next_power_of_2(n)", "BLOCK = 2")
    assert "GR001" in {f.code for f in check_source(small, "rows.py", cache=cache)}


def test_a_machine_branch_in_a_helper_takes_its_first_side() -> None:
    # `if torch.version.hip is not None: return 64, 4`: what the code does on a ROCm machine
    helper = (
        "\n\ndef calculate_settings(n):\n    if torch.version.hip is not None:\n"
        "        return 2 * triton.next_power_of_2(n), 8\n    return triton.next_power_of_2(n), 4\n"
    )
    src = KERNEL.format(imports="", helpers=helper, body=TUPLE_LAUNCH, bound="D")
    findings = check_source(src, "rows.py")
    assert _ar001(findings) == [] and _errors(findings) == []
    buggy = KERNEL.format(imports="", helpers=helper, body=TUPLE_LAUNCH, bound="D + 1")
    assert {f.code for f in _errors(check_source(buggy, "rows.py"))} & {"MB001", "MB002"}
