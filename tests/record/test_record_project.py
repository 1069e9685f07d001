"""The issue's acceptance test, under Triton's CPU interpreter: the fixture project's kernels
live in one module and are launched from another through a generic helper, so `argus check`
alone cannot bind them (and says so); `argus record -- pytest` then `argus check --launches`
finds both seeded bugs at their lines and nothing on the correct kernels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from record_helpers import PROJECT, REPO, argus, load

pytest.importorskip("torch")
pytest.importorskip("triton")

KERNELS = PROJECT / "mini_ops" / "kernels.py"


def _line_of(marker: str) -> int:
    lines = KERNELS.read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("record") / "launches.json"
    r = argus(
        "record", "--out", str(out), "--", sys.executable, "-m", "pytest", "-q", cwd=PROJECT, timeout=600
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out, r.stderr


def _findings(*extra: str) -> tuple[list[dict], str]:
    r = argus("check", str(KERNELS), "--format", "json", *extra, cwd=REPO)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    gating = [d for d in doc["diagnostics"] if d["severity"] in ("error", "warning")]
    return gating, r.stderr


def test_check_alone_cannot_bind_the_kernels_and_says_so() -> None:
    gating, err = _findings()
    assert gating == []
    for name in ("softmax_kernel", "scale_rows_kernel", "column_sum_kernel"):
        assert name in err
    assert "no launch site" in err and "argus record" in err


def test_record_writes_one_launch_per_kernel_and_signature(recording: tuple[Path, str]) -> None:
    out, err = recording
    doc = load(out)
    assert (doc["format"], doc["version"], doc["exit_status"], doc["complete"]) == (
        "argus-launches",
        1,
        0,
        True,
    )
    kernels = sorted(lr["kernel"]["name"] for lr in doc["launches"])
    assert kernels == ["add_kernel", "column_sum_kernel", "scale_rows_kernel", "softmax_kernel"]
    scale = next(lr for lr in doc["launches"] if lr["kernel"]["name"] == "scale_rows_kernel")
    x = next(a for a in scale["args"] if a["name"] == "x_ptr")
    assert (x["shape"], x["strides"], x["dtype"]) == ([6, 128], [128, 1], "float32")
    assert scale["grid"] == [6, 1, 1]
    assert scale["origin"]["file"].endswith("ops.py")
    block = next(a for a in scale["args"] if a["name"] == "BLOCK_SIZE")
    assert (block["value"], block["constexpr"]) == (128, True)
    assert "4 launch signatures of 4 kernels" in err


def test_check_with_launches_finds_both_seeded_bugs_and_nothing_else(recording: tuple[Path, str]) -> None:
    out, _ = recording
    gating, err = _findings("--launches", str(out))
    found = sorted((d["code"], d["kernel"], d["line"]) for d in gating)
    assert found == [
        ("GR002", "column_sum_kernel", _line_of("# seeded race:")),
        ("MB001", "scale_rows_kernel", _line_of("# seeded bug:")),
    ]
    for d in gating:
        assert "bound from 1 recorded launch signature" in d["witness"]["recorded"]
    # the run used 128 columns and one split: the probes found what the run did not hit
    oob = next(d for d in gating if d["code"] == "MB001")
    assert "n_cols=128" not in oob["witness"]["summary"]
    assert "softmax_kernel" not in err and "column_sum_kernel" not in err
