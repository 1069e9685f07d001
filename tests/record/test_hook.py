"""The launch hook on real Triton launches (the CPU interpreter): what it records, that the
command's own output and exit status do not change, and that a crash keeps what was recorded."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from record_helpers import argus, env, load

pytest.importorskip("torch")
pytest.importorskip("triton")

SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


    @triton.heuristics({"BLOCK": lambda args: 32 if args["n"] < 64 else 64})
    @triton.jit
    def heuristic_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


    def run(n):
        x = torch.arange(n, dtype=torch.float32)
        out = torch.empty_like(x)
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        scale_kernel[grid](x, out, n, 2.0, BLOCK=16)
        scale_kernel[grid](x, x, n, 2.0, BLOCK=16)  # in place: out aliases x
        heuristic_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](out, n)
        return out


    for n in (40, 40, 100):
        print(float(run(n).sum()))
    if sys.argv[1:] == ["crash"]:
        raise SystemExit(3)
    """
)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "launch_some.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


def _plain_run(script: Path, *args: str) -> str:
    import subprocess

    r = subprocess.run(
        [sys.executable, str(script), *args], env=env(), capture_output=True, text=True, timeout=300
    )
    return r.stdout


def test_records_every_signature_and_leaves_output_alone(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "l.json"
    r = argus("record", "--out", str(out), "--", sys.executable, str(script), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == _plain_run(script)  # the command's own output is unchanged
    doc = load(out)
    assert doc["complete"] is True and doc["hook_errors"] == []
    scale = [lr for lr in doc["launches"] if lr["kernel"]["name"] == "scale_kernel"]
    # n=40 and n=100, each out of place and in place: four signatures; n=40 ran twice
    assert len(scale) == 4
    assert sorted(lr["calls"] for lr in scale) == [1, 1, 2, 2]
    in_place = [lr for lr in scale if any(a.get("alias_of") == "x_ptr" for a in lr["args"])]
    assert len(in_place) == 2
    first = next(lr for lr in scale if lr["args"][2]["value"] == 100)
    assert first["grid"] == [7, 1, 1]  # the grid function, evaluated: cdiv(100, 16)
    assert first["args"][3] == {"name": "factor", "kind": "float", "value": 2.0, "constexpr": False}
    assert first["origin"]["function"] == "run"
    tuned = [lr for lr in doc["launches"] if lr["kernel"]["name"] == "heuristic_kernel"]
    assert tuned and all(any(a["name"] == "BLOCK" and a["constexpr"] for a in lr["args"]) for lr in tuned)


def test_a_crash_is_reported_and_what_was_recorded_is_kept(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "l.json"
    r = argus("record", "--out", str(out), "--", sys.executable, str(script), "crash", cwd=tmp_path)
    assert r.returncode == 3  # the command's own status
    assert "exited with status 3" in r.stderr and "kept in" in r.stderr
    doc = load(out)
    assert (doc["exit_status"], doc["complete"]) == (3, False)
    assert {lr["kernel"]["name"] for lr in doc["launches"]} == {"scale_kernel", "heuristic_kernel"}


def test_usage_errors(tmp_path: Path) -> None:
    r = argus("record", cwd=tmp_path)
    assert r.returncode == 2 and "no command given" in r.stderr
    r = argus("record", "--", "/no/such/program", cwd=tmp_path)
    assert r.returncode == 2 and "cannot run /no/such/program" in r.stderr


def test_every_python_process_of_the_command_is_recorded(script: Path, tmp_path: Path) -> None:
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, {str(script)!r}], check=True)\n"
        "print('parent done')\n",
        encoding="utf-8",
    )
    out = tmp_path / "l.json"
    r = argus("record", "--out", str(out), "--", sys.executable, str(parent), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("parent done\n")
    assert {lr["kernel"]["name"] for lr in load(out)["launches"]} == {"scale_kernel", "heuristic_kernel"}
