"""`argus check --launches FILE`: usage errors and what is said about kernels left unbound."""

from __future__ import annotations

import json
from pathlib import Path

from record_helpers import PROJECT, REPO, argus

KERNELS = PROJECT / "mini_ops" / "kernels.py"


def test_a_missing_launch_file_is_a_usage_error(tmp_path: Path) -> None:
    r = argus("check", str(KERNELS), "--launches", str(tmp_path / "none.json"), cwd=REPO)
    assert r.returncode == 2 and "cannot read the launch file" in r.stderr


def test_an_invalid_launch_file_is_a_usage_error_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "l.json"
    bad.write_text(json.dumps({"format": "argus-launches", "version": 1, "launches": [{"kernel": {}}]}))
    r = argus("check", str(KERNELS), "--launches", str(bad), cwd=REPO)
    assert r.returncode == 2 and 'launches[0].kernel: missing "name"' in r.stderr


def test_a_recording_of_other_files_leaves_the_kernels_unbound_and_says_so(tmp_path: Path) -> None:
    other = tmp_path / "l.json"
    launch = {
        "kernel": {"name": "softmax_kernel", "file": "/elsewhere/lib/kernels.py"},
        "grid": [1],
        "args": [],
    }
    other.write_text(json.dumps({"format": "argus-launches", "version": 1, "launches": [launch]}))
    r = argus("check", str(KERNELS), "--launches", str(other), cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert "softmax_kernel, scale_rows_kernel, column_sum_kernel" in r.stderr
    assert "the launch file has no launch of them" in r.stderr
