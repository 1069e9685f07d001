"""Local runs through the worker subprocess (CPU, Triton interpreter), the CLI, reports, errors."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from argus.agent.profile.api import ProfileCancelled, ProfileError, profile
from argus.agent.profile.cli import main
from argus.agent.profile.report import write_report
from argus.agent.profile.targets import parse_target

from tests.profile.conftest import TASKS

VADD = f"{TASKS / 'vadd.py'}::add_kernel"


def test_local_cpu_run(tpy: str) -> None:
    r = profile(VADD, python=tpy, timeout=240)
    assert r.backend == "cpu" and r.rel_error == 0.0 and r.peak is None
    assert r.flops == 4096 and r.bytes == 3 * 4 * 4096 and r.timing["n"] >= 3
    assert r.roofline.bound == "unknown"


def test_cli_json_and_reports(tpy: str, tmp_path: Path, capsys) -> None:
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    assert main([VADD, "--python", tpy, "--json", "--report", str(html)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lens"].endswith("CPU interpreter, no peaks") and doc["backend"] == "cpu"
    assert doc["hints"] == []  # a CPU run has no peaks, so no measured hint
    assert "<img alt='roofline'" in html.read_text()
    from argus.agent.profile.result import ProfileResult

    write_report([ProfileResult.from_json(doc)], png)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_kernelbench_task_counts_flops_with_the_reference(tpy: str) -> None:
    r = profile(f"{TASKS / 'kb_matmul.py'}::ModelNew", python=tpy, timeout=240)
    assert r.flops == 2 * 64 * 32 * 48 and r.flops_source.startswith("FlopCounterMode")
    assert r.rel_error is not None and r.rel_error < 1e-6
    assert r.bytes == 4 * (64 * 32 + 32 * 48 + 64 * 48)


def test_local_timeout_and_cancel(tpy: str) -> None:
    slow = f"{TASKS / 'vadd.py'}::slow"
    t0 = time.monotonic()
    with pytest.raises(ProfileError, match="timed out"):
        profile(slow, python=tpy, timeout=10)
    assert time.monotonic() - t0 < 30
    cancel = threading.Event()
    threading.Timer(5, cancel.set).start()
    with pytest.raises(ProfileCancelled):
        profile(slow, python=tpy, timeout=120, cancel=cancel)


def test_gpu_backend_on_a_host_without_gpu(tpy: str) -> None:
    with pytest.raises(ProfileError, match="no GPU visible"):
        profile(VADD, python=tpy, backend="nvidia", timeout=120)


def test_usage_errors(capsys) -> None:
    assert main(["no/such/file.py::k"]) == 2
    assert main([f"{TASKS / 'vadd.py'}"]) == 2  # two tasks, none named
    assert "several tasks" in capsys.readouterr().err
    assert main([VADD, "--python", "/nonexistent/python", "--timeout", "30"]) == 1


@pytest.mark.parametrize(
    "bad",
    [
        "ssh://-oProxyCommand=touch%20x",
        "ssh://host;rm",
        "ssh://a b",
        "http://x",
        "ssh://-l@host",
        "ssh://us$er@host",
    ],
)
def test_target_parsing_rejects_option_and_shell_injection(bad: str) -> None:
    with pytest.raises(ProfileError):
        parse_target(bad)


def test_target_parsing() -> None:
    t = parse_target("ssh://me@gpu-1.example.org:2222")
    assert (t.user, t.host, t.port) == ("me", "gpu-1.example.org", 2222)
    assert t.ssh("true")[-3:] == ["--", "me@gpu-1.example.org", "true"]
    assert parse_target("local") is None
    assert parse_target("ssh://[::1]:22").host == "::1"
