"""The Ray runner against a real local Ray cluster that this test starts (CPU only, Triton interpreter):
one Ray task per candidate, each a fresh worker subprocess; the search is the same as the local one."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.agent.optimize.api import optimize
from argus.agent.optimize.types import OptimizeRequest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'argus-lsp[dev]')")

TARGET = str(Path(__file__).resolve().parents[2] / "examples" / "naive_matmul.py") + "::matmul_kernel"


@pytest.fixture
def cluster():
    info = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield info.address_info["address"]
    finally:
        ray.shutdown()


def test_candidates_fan_out_as_ray_tasks(cluster: str) -> None:
    request = OptimizeRequest(target=TARGET, policy="knowledge", budget=2, backend="cpu", ray_address=cluster,
                              timeout_s=300, seed=5)
    result = optimize(request)
    assert [a.candidate.origin for a in result.attempts] == ["knowledge:expert", "knowledge:retile"]
    assert all(a.verified for a in result.attempts), [a.summary() for a in result.attempts]
    assert result.status == "unmeasured" and result.best is result.attempts[0]
    assert any("performance was not measured" in n for n in result.notes)
    runners = [a.gates[1].details["runner"] for a in result.attempts]
    assert all(r.startswith("ray task ") for r in runners) and len(set(runners)) == 2  # one task per candidate
