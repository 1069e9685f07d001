"""The real-world benchmark's own logic, on a tiny fake package served by a local folder.

No network: `pip download` runs for real, pointed at a folder of wheels (`--no-index
--find-links`), and the checker runs for real on the fake package's kernels, one correct and one
with a missing mask. What is checked is the instrument: hashes, unpacking, which files count,
how findings are counted per kernel, the time guard, AR001 grouping and the seeded sample.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import realworld  # noqa: E402
from realworld_fetch import FetchError, Pin, download, sha256_of, triton_files, unpack_sources  # noqa: E402

CLEAN = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
"""

# The store has no mask: the last program writes past n_elements (MB002).
BUGGY = CLEAN.replace("tl.store(out_ptr + offs, x * 2.0, mask=mask)", "tl.store(out_ptr + offs, x * 2.0)")

NOT_A_KERNEL = '"""Mentions triton in a docstring, defines no kernel."""\n\nX = 1\n'


def _wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A minimal valid wheel (METADATA, WHEEL, RECORD) holding `files`."""
    dist = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    members = {
        **files,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: argus-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    members[f"{dist}/RECORD"] = "".join(f"{m},,\n" for m in members) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in members.items():
            zf.writestr(member, text)
    return path


@pytest.fixture
def index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    _wheel(
        folder,
        "fakekern",
        "1.0",
        {
            "fakekern/__init__.py": "",
            "fakekern/clean.py": CLEAN,
            "fakekern/ops/buggy.py": BUGGY,
            "fakekern/notes.py": NOT_A_KERNEL,
            "fakekern/plain.py": "X = 2\n",
            "fakekern/data.txt": "triton\n",
        },
    )
    return folder


def _local(index: Path) -> tuple[str, ...]:
    return ("--no-index", "--find-links", str(index))


def test_download_through_pip_checks_the_hash(index: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    got = download(Pin("fakekern", "1.0", None), wheels, _local(index))
    assert got.parent == wheels and got.name == "fakekern-1.0-py3-none-any.whl"
    good = sha256_of(got)
    assert download(Pin("fakekern", "1.0", good), wheels, _local(index)) == got  # cached, hash verified
    with pytest.raises(FetchError, match="is not the pinned"):
        download(Pin("fakekern", "1.0", "0" * 64), wheels, _local(index))


def test_download_of_a_missing_version_is_a_clear_error(index: Path, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"pip download fakekern==9\.9 failed"):
        download(Pin("fakekern", "9.9", None), tmp_path / "wheels", _local(index))


def test_unpack_keeps_python_sources_and_refuses_escaping_members(index: Path, tmp_path: Path) -> None:
    wheel = next(index.glob("*.whl"))
    root = unpack_sources(wheel, tmp_path / "src")
    assert root.name == "fakekern-1.0"
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert "fakekern/data.txt" not in names and "fakekern/ops/buggy.py" in names
    assert [p.relative_to(root).as_posix() for p in triton_files(root)] == [
        "fakekern/clean.py",
        "fakekern/notes.py",
        "fakekern/ops/buggy.py",
    ]
    evil = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../outside.py", "X = 1\n")
    with pytest.raises(FetchError, match="leaves the folder"):
        unpack_sources(evil, tmp_path / "src")
    assert not (tmp_path / "outside.py").exists()


def test_package_figures_count_kernels_and_findings(index: Path, tmp_path: Path) -> None:
    pin = Pin("fakekern", "1.0", None)
    results = realworld.run_pins([pin], tmp_path / "rw", timeout_s=120, pip_args=_local(index))
    pkg = results["fakekern==1.0"]
    assert [f["path"] for f in pkg["files"]] == ["fakekern/clean.py", "fakekern/ops/buggy.py"]
    s = pkg["summary"]
    assert (s["files"], s["kernels"], s["kernels_checked"]) == (2, 2, 2)
    assert s["kernels_error_warning"] == 1 and s["kernels_by_code"].get("MB002") == 1
    assert s["kernels_launched_in_file"] == 2
    assert s["crashes"] == [] and s["hangs"] == []
    assert s["ms_per_kernel_median"] > 0 and s["peak_rss_mb_max"] > 0
    failing = realworld.failing_findings(pkg["files"])
    assert [(d["file"], d["code"], d["kernel"]) for d in failing] == [
        ("fakekern/ops/buggy.py", "MB002", "scale_kernel")
    ]


def test_a_file_past_its_budget_counts_as_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(CLEAN)
    res = realworld.check_one(path, "k.py", timeout_s=1e-6)
    assert res.status == "hang" and len(res.kernels) == 1
    assert realworld.summarize([res])["hangs"] == ["k.py: over 1e-06 s of CPU"]


def test_time_limit_interrupts_a_busy_loop() -> None:
    t0 = time.perf_counter()
    with pytest.raises(realworld.FileTimeout), realworld.time_limit(0.05):
        while True:
            pass
    assert time.perf_counter() - t0 < 5


def test_undecodable_file_is_counted_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"import triton\n\xff\xfe\n")
    res = realworld.check_one(path, "bad.py", timeout_s=10)
    assert res.status == "unreadable" and "UnicodeDecodeError" in res.error


@pytest.mark.parametrize(
    ("message", "group"),
    [
        (
            "the value of `BLOCK_D` (_next_pow2) is not known without running the launcher; probes use 4",
            "the value of `NAME` (_next_pow2)",
        ),
        ("`tl.sort` is not modelled: findings that depend on it are not judged", "`tl.sort`"),
        ("`sort` is not modelled: findings that depend on it are not judged", "`sort`"),
        (
            "the name `exp2` (not a parameter, local or module constant) is not modelled: x",
            "the name `exp2` (not a parameter, local or module constant)",
        ),
        ("the grid `(n_rows, 3 * h)` is not modelled: findings ...", "the grid `(x, N * x)`"),
        (
            "part of this kernel (internal: IndexError: index 16 is out of bounds) is not modelled: x",
            "part of this kernel (internal: IndexError)",
        ),
    ],
)
def test_ar001_messages_group_by_construct(message: str, group: str) -> None:
    assert realworld.ar001_group(message) == group


def test_sample_is_seeded_and_in_file_order() -> None:
    findings = [{"file": f"f{i:02d}.py", "line": i} for i in range(40)]
    a = realworld.sample(findings, 10, seed=12)
    assert a == realworld.sample(findings, 10, seed=12) and len(a) == 10
    assert a == sorted(a, key=lambda d: d["line"])
    assert a != realworld.sample(findings, 10, seed=13)
    assert realworld.sample(findings, 50, seed=12) == findings


def test_cli_reads_json_and_prints_summary_and_sample(index: Path, tmp_path: Path) -> None:
    results = realworld.run_pins(
        [Pin("fakekern", "1.0", None)], tmp_path / "rw", timeout_s=120, pip_args=_local(index)
    )
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(results))
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "realworld.py"), "--from-json", str(raw), "--sample", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "== fakekern==1.0: 2 files, 2 kernels" in run.stdout
    assert "fakekern/ops/buggy.py:" in run.stdout and "MB002 scale_kernel" in run.stdout


def test_results_round_trip_compressed(tmp_path: Path) -> None:
    results = {"x==1": {"name": "x", "version": "1", "files": [], "summary": {}}}
    for name in ("r.json", "r.json.gz"):
        realworld.write_results(tmp_path / name, results)
        assert realworld.read_results(tmp_path / name) == results
    assert (tmp_path / "r.json.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_unknown_package_is_a_usage_error() -> None:
    with pytest.raises(SystemExit, match="unknown package"):
        realworld.main(["--packages", "no-such-package"])


def test_several_packages_get_a_figure_for_the_whole_set(tmp_path: Path) -> None:
    """The median of the union is over every kernel: two files of 1 and 3 kernels at 10 and 40 ms."""
    def pkg(name: str, cpu_s: float, kernels: int) -> dict:
        ks = [{"name": f"k{i}", "line": i, "launched_here": True, "findings": []} for i in range(kernels)]
        f = {"path": f"{name}/a.py", "status": "ok", "kernels": ks, "seconds": cpu_s, "cpu_seconds": cpu_s,
             "peak_rss_mb": 1.0, "error": ""}
        return {"name": name, "version": "1", "files": [f], "summary": {}}

    results = {"a==1": pkg("a", 0.010, 1), "b==1": pkg("b", 0.120, 3)}
    assert realworld.combined_label(results) == "all packages (a==1, b==1)"
    s = realworld.summarize(realworld.combined_files(results))
    assert (s["files"], s["kernels"], s["kernels_without_ar001"]) == (2, 4, 4)
    assert s["cpu_ms_per_kernel_median"] == 40.0
