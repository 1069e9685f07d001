"""The speed benchmark's own logic on a tiny fake package: the seeded sample, real worker
subprocesses for two trees (this one twice: its figures are then the same checker's), the
fastest pass kept, findings compared by digest. No figure is asserted, only the instrument."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import realworld_speed  # noqa: E402

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


def copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out
"""


def _package(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    pkg = src / "fakepkg-1.0" / "fakepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "notes.py").write_text("# mentions triton but defines no kernel\n")
    for i in range(4):
        (pkg / f"k{i}.py").write_text(KERNEL)
    (src / "otherpkg-2.0").mkdir()  # not asked for: never sampled
    (src / "otherpkg-2.0" / "k.py").write_text(KERNEL)
    return tmp_path


def test_the_sample_is_seeded_and_holds_only_kernel_files_of_the_named_packages(tmp_path: Path) -> None:
    src = _package(tmp_path) / "src"
    one = realworld_speed.sample_files(src, ["fakepkg"], 2, seed=3)
    again = realworld_speed.sample_files(src, ["fakepkg"], 2, seed=3)
    assert one == again and len(one) == 2
    assert all(f.parent.name == "fakepkg" and f.name.startswith("k") for _, f in one)
    everything = realworld_speed.sample_files(src, ["fakepkg"], 99, seed=3)
    assert [f.name for _, f in everything] == ["k0.py", "k1.py", "k2.py", "k3.py"]


def test_two_trees_are_timed_file_by_file_and_their_findings_compared(tmp_path: Path, capsys) -> None:
    folder = _package(tmp_path)
    out = tmp_path / "speed.json"
    argv = ["--dir", str(folder), "--packages", "fakepkg", "--files", "2", "--repeat", "2"]
    assert realworld_speed.main([*argv, "--baseline-path", str(ROOT), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "identical in every file" in printed and "base / new" in printed
    result = json.loads(out.read_text())
    assert result["files"] == 2 and result["kernels"] == 2 and result["changed"] == []
    for rows in (result["rows_new"], result["rows_base"]):
        assert [r["kernels"] for r in rows] == [1, 1]
        assert all(r["cpu_s"] > 0 and r["findings"] >= 1 for r in rows)  # the unmasked load
    assert result["ratio"]["total_s"] > 0


def test_a_pass_with_other_findings_stops_the_benchmark() -> None:
    rows = [{"file": "a.py", "digest": "1", "cpu_s": 0.5}]
    realworld_speed.keep_fastest(rows, 0, {"file": "a.py", "digest": "1", "cpu_s": 0.2})
    assert rows[0]["cpu_s"] == 0.2
    with pytest.raises(SystemExit, match="changed between passes"):
        realworld_speed.keep_fastest(rows, 0, {"file": "a.py", "digest": "2", "cpu_s": 0.1})


def test_two_result_files_are_compared_kernel_by_kernel(tmp_path: Path, capsys) -> None:
    from realworld import write_results

    finding = {"code": "MB001", "severity": "error", "kernel": "k", "line": 9, "message": "past the end"}

    def results(findings: list[dict]) -> dict:
        kernel = {"name": "k", "line": 6, "launched_here": True, "findings": findings}
        return {"pkg==1": {"files": [{"path": "a.py", "status": "ok", "kernels": [kernel]}]}}

    old, same, new = tmp_path / "old.json.gz", tmp_path / "same.json", tmp_path / "new.json"
    write_results(old, results([finding]))
    write_results(same, results([finding]))
    write_results(new, results([]))
    assert realworld_speed.compare_results(old, same) == 0
    assert "identical findings" in capsys.readouterr().out
    assert realworld_speed.compare_results(old, new) == 1
    printed = capsys.readouterr().out
    assert "pkg==1 a.py:6 k" in printed and '- {"code": "MB001"' in printed and "1 kernels differ" in printed


def test_a_listed_subset_is_read_in_order_and_a_stray_path_refused(tmp_path: Path) -> None:
    src = _package(tmp_path) / "src"
    listing = tmp_path / "subset.txt"
    listing.write_text("# the chosen files\nfakepkg-1.0/fakepkg/k2.py\n\nfakepkg-1.0/fakepkg/k0.py\n")
    chosen = realworld_speed.listed_files(src, listing)
    assert [(r.name, f.name) for r, f in chosen] == [("fakepkg-1.0", "k2.py"), ("fakepkg-1.0", "k0.py")]
    listing.write_text("fakepkg-1.0/fakepkg/missing.py\n")
    with pytest.raises(SystemExit, match="not a file under a package root"):
        realworld_speed.listed_files(src, listing)
    listing.write_text("# nothing\n")
    with pytest.raises(SystemExit, match="lists no files"):
        realworld_speed.listed_files(src, listing)
