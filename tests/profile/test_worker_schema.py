"""The worker's typed, versioned messages: round trips, clear rejections, and both ends enforcing them.

The end-to-end checks run the real worker script (staged the way targets.py stages it) and a real
subprocess that speaks a broken protocol; neither needs torch, because a request is checked
before anything heavy is imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from argus.agent.profile import worker_counters
from argus.agent.profile.api import ProfileError, build_result
from argus.agent.profile.runner import WORKER_FILES, WorkerRun, stream
from argus.agent.profile.targets import _stage
from argus.agent.profile.worker_schema import (
    EVENT_PREFIX,
    SCHEMA_VERSION,
    CounterCapture,
    DeviceInfo,
    DoBench,
    Progress,
    ProtonCapture,
    SchemaError,
    WorkerError,
    WorkerRequest,
    WorkerResult,
    decode_event,
    encode_event,
)
from argus.agent.task import load_task

from tests.profile.conftest import FIXTURES, ROOT, TASKS

VADD = TASKS / "vadd.py"


def _request(**changes) -> dict:
    data = {**load_task(f"{VADD}::add_kernel").request(), "backend": "cpu"}
    return {**data, **changes}


def _result() -> WorkerResult:
    env = DeviceInfo(device="cpu", name="CPU (Triton interpreter)", backend="cpu", torch="2", triton="3",
                     python="3.12", host="h")  # fmt: skip
    return WorkerResult(
        env=env, median_ms=1.5, times_ms=[1.0, 1.5, 2.0], flops=4096, counters=CounterCapture("ncu")
    )


def test_request_round_trip() -> None:
    req = WorkerRequest.from_dict(_request(timing={"rep_ms": 50}))
    assert req.inputs[0].shape == [4096] and req.timing.rep_ms == 50 and req.version == SCHEMA_VERSION
    assert WorkerRequest.from_dict(json.loads(json.dumps(req.to_dict()))) == req


def test_result_events_round_trip() -> None:
    for message in (_result(), Progress("timing", 3, 10), WorkerError("RuntimeError: boom", "Traceback ...")):
        line = encode_event(message)
        assert line.startswith(EVENT_PREFIX) and "\n" not in line
        assert decode_event(line) == message
    assert decode_event("the user's own print\n") is None


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"kind": "triton"}, "request.kind: expected one of 'spec', 'kernelbench', got str 'triton'"),
        ({"inputs": [{"name": "x", "shape": [4, "M"], "dtype": "float32"}]},
         "request.inputs[0].shape[1]: expected int, got str 'M'"),
        ({"inputs": [{"name": "x", "shape": [-1], "dtype": "float32"}]}, "request.inputs[0].shape: sizes must be >= 0"),
        ({"sizes": {"N": True}}, "request.sizes.N: expected int, got bool True"),
        ({"timing": {"rep": 10}}, "request.timing: unknown field 'rep'"),
        ({"timing": {"min_reps": 50, "max_reps": 5}}, "needs 1 <= min_reps <= max_reps"),
        ({"flops": "2*N"}, "request.flops: expected float, got str '2*N'"),
        ({"counters": "yes"}, "request.counters: expected one of 'auto', 'none', 'ncu', 'rocprof'"),
        ({"launcher": None}, "request.launcher: expected str, got NoneType None"),
        ({"version": 0}, "request: schema version 0, this side speaks 1"),
        ({"colour": "red"}, "request: unknown field 'colour'"),
    ],
)  # fmt: skip
def test_invalid_requests_are_rejected_naming_the_field(changes: dict, error: str) -> None:
    with pytest.raises(SchemaError) as caught:
        WorkerRequest.from_dict(_request(**changes), "request")
    assert error in str(caught.value)


def test_missing_fields_and_bad_events() -> None:
    data = _request()
    del data["kernel"]
    with pytest.raises(SchemaError, match="request: missing field 'kernel'"):
        WorkerRequest.from_dict(data, "request")
    with pytest.raises(SchemaError, match="worker_request: expected an object, got list"):
        WorkerRequest.from_dict([])
    bad = {
        EVENT_PREFIX + "{not json": "event: not JSON",
        EVENT_PREFIX + '{"event": "telemetry", "version": 1}': "unknown kind 'telemetry'",
        EVENT_PREFIX + '{"event": "progress", "phase": "x"}': "progress event: schema version None",
        EVENT_PREFIX + '{"event": "result", "version": 1, "median_ms": 1}': "result event: missing field 'env'",
        encode_event(_result()).replace('"median_ms": 1.5', '"median_ms": "fast"'):
            "result event.median_ms: expected float, got str 'fast'",
    }  # fmt: skip
    for line, error in bad.items():
        with pytest.raises(SchemaError, match=error.replace("(", r"\(").replace("[", r"\[")):
            decode_event(line)


def test_the_worker_rejects_an_invalid_request_with_a_clear_error(tmp_path: Path) -> None:
    """The staged worker, run as a script by a plain interpreter: the schema travels with it."""
    task = load_task(f"{VADD}::add_kernel")
    _stage(WorkerRequest.from_dict(_request()), task.path, tmp_path, remote=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["request.json", "task.py", *(p.name for p in WORKER_FILES)]
    )
    data = json.loads((tmp_path / "request.json").read_text())
    data["inputs"][0]["shape"] = ["N"]  # a symbolic size that was never resolved
    (tmp_path / "request.json").write_text(json.dumps(data))
    run = stream([sys.executable, "worker.py", "request.json"], timeout=60, cwd=str(tmp_path))
    assert run.returncode == 1 and run.result is None
    assert run.error == "SchemaError: request.inputs[0].shape[0]: expected int, got str 'N'"


def test_argus_rejects_a_worker_that_breaks_the_schema(tmp_path: Path) -> None:
    """A process that marks a line as an event but sends a malformed result: the profile fails
    saying so, instead of reading half a result."""
    result = _result().to_dict()
    del result["times_ms"]
    line = EVENT_PREFIX + json.dumps({"event": "result", "version": SCHEMA_VERSION, **result})
    script = tmp_path / "fake_worker.py"
    script.write_text(f"print('warming up')\nprint({line!r})\n")
    run = stream([sys.executable, str(script)], timeout=60)
    assert run.result is None and "missing field 'times_ms'" in (run.error or "")
    assert run.output_tail == "warming up\n"
    task = load_task(f"{VADD}::add_kernel")
    with pytest.raises(ProfileError, match="the worker sent a message Argus cannot read: result event"):
        build_result(task, WorkerRequest.from_dict(_request()), run, "local")


def test_staged_counters_start_the_staged_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The profilers re-run worker.py in counters-child mode: the staged copy, next to them."""
    _stage(WorkerRequest.from_dict(_request()), VADD, tmp_path, remote=True)
    probe = "import worker_counters; print(worker_counters.WORKER_SCRIPT)"
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.stdout.strip() == str(tmp_path / "worker.py")
    monkeypatch.setenv("PATH", str(tmp_path))  # no profiler anywhere: a clear capture error, no crash
    if not Path("/usr/local/cuda/bin/ncu").exists():
        assert "ncu (Nsight Compute) not found" in worker_counters.run_ncu("request.json", 10).error
    if not Path("/opt/rocm/bin/rocprofv3").exists():
        assert "rocprofv3 not found" in worker_counters.run_rocprof("request.json", 10).error


def test_a_captured_h200_run_reads_back_through_the_schema() -> None:
    """The H200 run's raw captures (fixtures) and environment, sent as a result event and read back,
    give the numbers that run committed (benchmarks/results/profile-h200.json)."""
    committed = next(
        r
        for r in json.loads((ROOT / "benchmarks/results/profile-h200.json").read_text())
        if r["kernel"] == "attn_fwd_kernel"
    )
    task = load_task(f"{TASKS / 'attention.py'}::attn_fwd_kernel")
    request = WorkerRequest.from_dict({**task.request(), "counters": "auto", "proton": True})
    sent = WorkerResult(
        env=DeviceInfo.from_dict(committed["env"]),  # what the worker reported on the H200
        median_ms=committed["median_ms"],
        times_ms=[committed["median_ms"]] * 3,
        dtype="bfloat16",
        rel_error=committed["rel_error"],
        flops=request.flops,
        flops_source="task formula",
        bytes=request.bytes,
        bytes_source="task formula",
        do_bench=DoBench(committed["do_bench_ms"], json.loads((FIXTURES / "do_bench_h200_attn_fwd_kernel.json").read_text())),
        counters=CounterCapture("ncu", stdout=(FIXTURES / "ncu_h200_attn_fwd_kernel.csv").read_text(), rc=0),
        proton=ProtonCapture(hatchet=json.loads((FIXTURES / "proton_h200_attn_fwd_kernel.hatchet").read_text()), launches=10),
    )  # fmt: skip
    received = decode_event(encode_event(sent))
    assert received == sent
    run = WorkerRun(result=received, returncode=0)
    got = build_result(task, request, run, "local").to_json()
    for key in ("lens", "device", "backend", "peak", "do_bench_ms", "proton", "flops", "bytes"):
        assert got[key] == committed[key], key
    for key, value in committed["counters"].items():
        assert got["counters"][key] == (pytest.approx(value) if isinstance(value, float) else value), key
