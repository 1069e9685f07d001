"""The launch file's reader and validator, and binding kernels from hand-written recordings
(no Triton needed: the facts are data)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from argus.analyzers import check_source
from argus.analyzers.model.launch_file import LaunchFileError, parse_launch_file, same_file


def tensor(name: str, shape: list[int], strides: list[int] | None = None, dtype: str = "float32") -> dict:
    if strides is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
    return {"name": name, "kind": "tensor", "shape": shape, "strides": strides, "dtype": dtype}


def scalar(name: str, value: Any, constexpr: bool = False) -> dict:
    kind = "int" if isinstance(value, int) else "float"
    return {"name": name, "kind": kind, "value": value, "constexpr": constexpr}


def doc(*launches: dict) -> str:
    return json.dumps({"format": "argus-launches", "version": 1, "launches": list(launches)})


def launch(kernel: str, grid: list[int], args: list[dict], file: str = "/proj/pkg/k.py") -> dict:
    return {"kernel": {"name": kernel, "file": file, "line": 1}, "grid": grid, "args": args, "calls": 1}


# ---- reader ---------------------------------------------------------------------------------


def test_reads_a_valid_file() -> None:
    lf = parse_launch_file(doc(launch("k", [4], [tensor("x", [8, 3]), scalar("n", 8)])))
    (lr,) = lf.launches
    assert (lr.kernel, lr.grid, lr.arg("x").shape, lr.arg("x").strides) == ("k", (4, 1, 1), (8, 3), (3, 1))
    assert lf.for_kernel("k", "/elsewhere/pkg/k.py") == [lr]  # same trailing path: another checkout
    assert lf.for_kernel("k", "/proj/other/k.py") == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(version=2), "version 2; this Argus reads version 1"),
        (lambda d: d.update(format="other"), "not an Argus launch file"),
        (lambda d: d["launches"][0].pop("args"), 'launches[0]: missing "args"'),
        (lambda d: d["launches"][0]["args"][0].update(shape=[2, "x"]), '"shape" must be a list of integers'),
        (lambda d: d["launches"][0]["args"][0].update(strides=[1]), "shape and strides differ"),
        (lambda d: d["launches"][0]["args"][0].update(kind="blob"), 'unknown "kind"'),
        (lambda d: d["launches"][0].update(grid=[1, 2, 3, 4]), '"grid" must have 1 to 3'),
        (lambda d: d["launches"][0]["kernel"].update(name=3), '"name" has the wrong type'),
    ],
)
def test_invalid_files_are_named_precisely(mutate: Any, message: str) -> None:
    d = json.loads(doc(launch("k", [4], [tensor("x", [8, 3])])))
    mutate(d)
    with pytest.raises(LaunchFileError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_launch_file(json.dumps(d), source="l.json")


def test_not_json() -> None:
    with pytest.raises(LaunchFileError, match="is not JSON"):
        parse_launch_file("{", source="l.json")


def test_same_file_needs_two_path_components() -> None:
    assert same_file("/a/pkg/k.py", "/b/pkg/k.py")
    assert not same_file("/a/pkg/k.py", "/b/lib/k.py")


# ---- binding ------------------------------------------------------------------------------

ROWS = """\
import triton
import triton.language as tl


@triton.jit
def row_copy(x_ptr, out_ptr, stride_x, stride_out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * stride_out + cols, v, mask=cols <= n_cols)
"""


def _rows_launch(rows: int, cols: int, grid: int | None = None) -> dict:
    block = 1 << (cols - 1).bit_length()
    return launch(
        "row_copy",
        [rows if grid is None else grid],
        [
            tensor("x_ptr", [rows, cols]),
            tensor("out_ptr", [rows, cols]),
            scalar("stride_x", cols),
            scalar("stride_out", cols),
            scalar("n_cols", cols),
            scalar("BLOCK", block, constexpr=True),
        ],
        file="/proj/pkg/rows.py",
    )


def _check(text: str, *launches: dict) -> list:
    lf = parse_launch_file(doc(*launches))
    by = {lr.kernel: lf.for_kernel(lr.kernel) for lr in lf.launches}
    return check_source(text, "pkg/rows.py", launches=by)


def test_without_a_recording_the_kernel_is_not_judged() -> None:
    assert [f for f in check_source(ROWS, "pkg/rows.py") if f.code.startswith(("MB", "GR"))] == []


def test_a_recording_at_a_power_of_two_still_finds_the_ragged_overwrite() -> None:
    found = _check(ROWS, _rows_launch(4, 64))
    oob = [f for f in found if f.code == "MB002"]
    assert oob and oob[0].span.start_point[0] + 1 == 10
    assert "bound from 1 recorded launch signature" in oob[0].witness["recorded"]


def test_the_fixed_kernel_is_clean_when_bound_from_a_recording() -> None:
    fixed = ROWS.replace("cols <= n_cols", "cols < n_cols")
    assert [
        f for f in _check(fixed, _rows_launch(4, 64), _rows_launch(7, 100)) if f.severity.value != "info"
    ] == []


def test_a_grid_no_formula_explains_leaves_the_kernel_unbound_and_says_why() -> None:
    found = _check(ROWS, _rows_launch(4, 64, grid=3))
    assert not [f for f in found if f.code.startswith(("MB", "GR"))]
    notes = [f.message for f in found if f.code == "AR001"]
    assert any("grid axis 0 (3) is not a function of the recorded sizes" in m for m in notes)


def test_relations_must_hold_in_every_recorded_call() -> None:
    """Two calls where rows and columns happen to be equal in one of them: the classes stay apart."""
    from argus.analyzers.model.recorded import _HostWriter

    lf = parse_launch_file(doc(_rows_launch(64, 64), _rows_launch(5, 64)))
    kernel, scan = _model(ROWS)
    text = _HostWriter(kernel, scan, lf.launches).write()
    assert "x_a, n_cols = x_ptr.shape" in text
    assert "BLOCK = triton.next_power_of_2(n_cols)" in text
    assert "row_copy[(x_a,)]" in text


def test_a_transposed_tensor_keeps_its_layout() -> None:
    from argus.analyzers.model.recorded import _HostWriter

    lr = copy.deepcopy(_rows_launch(4, 64))
    lr["args"][0] = tensor("x_ptr", [4, 64], [1, 4])
    lf = parse_launch_file(doc(lr))
    kernel, scan = _model(ROWS)
    text = _HostWriter(kernel, scan, lf.launches).write()
    assert "x_ptr = x_ptr.permute(1, 0)" in text


def _model(text: str) -> tuple[Any, Any]:
    import ast

    from argus.analyzers.model.kernel import SourceMap, build_kernel_model, line_starts
    from argus.analyzers.model.scan import scan_kernel

    func = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef))
    smap = SourceMap(text.encode(), line_starts(text.encode()), 0, 0)
    kernel = build_kernel_model(func, smap, {})
    return kernel, scan_kernel(func, [p.name for p in kernel.params], {})


def test_calls_that_disagree_on_the_grid_fall_back_to_the_first_calls_relations() -> None:
    found = _check(ROWS, _rows_launch(4, 64), _rows_launch(5, 64, grid=3))
    oob = [f for f in found if f.code == "MB002"]
    assert oob and "bound from 1 recorded launch signature" in oob[0].witness["recorded"]


def test_an_in_place_launch_binds_one_tensor_for_both_arguments() -> None:
    from argus.analyzers.model.recorded import _HostWriter

    lr = _rows_launch(4, 64)
    lr["args"][1] = dict(lr["args"][1], alias_of="x_ptr", storage_offset=0)
    lr["args"][0] = dict(lr["args"][0], storage_offset=0)
    lf = parse_launch_file(doc(lr))
    kernel, scan = _model(ROWS)
    text = _HostWriter(kernel, scan, lf.launches).write()
    assert "def __argus_recorded_launch__(x_ptr):" in text and "out_ptr = x_ptr" in text
    assert [f.code for f in _check(ROWS, lr) if f.code == "MB002"] == ["MB002"]
