"""`argus mcp` over stdio: a real `python -m argus_lsp mcp` subprocess driven by the `mcp` SDK's own client.

Checked: the five tools are listed; `check` on source text and on a folder gives the `argus check
--format json` findings; `explain_finding` returns the rule's page; `knowledge_search` ranks the
cards; `profile` is refused unless the server was started with `--allow-run`; `evaluate_candidate`
runs gate 1 only without that flag (and rejects a stale reduction pointer with its witness), and all
gates with it, where `profile` also runs (both under the Triton interpreter: they need an interpreter
with torch + triton).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

from tests.profile.conftest import triton_python  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
MATMUL = EXAMPLES / "naive_matmul.py"
TOOLS = {"check", "explain_finding", "knowledge_search", "evaluate_candidate", "profile"}


def params(*flags: str) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "argus_lsp", "mcp", *flags], env=env, cwd=str(REPO)
    )


async def call(client: Client, tool: str, **arguments) -> tuple[bool, dict | str]:
    """(is_error, the structured result or the error text)."""
    result = await client.call_tool(tool, arguments, read_timeout_seconds=300)
    if result.is_error:
        return True, " ".join(getattr(c, "text", "") for c in result.content)
    if result.structured_content is not None:
        return False, result.structured_content
    return False, json.loads(result.content[0].text)


async def test_tools_listed_and_static_tools_answer() -> None:
    async with Client(params()) as client:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        schema = next(t for t in listed.tools if t.name == "check").input_schema
        assert {"path", "source"} <= set(schema["properties"])

        err, out = await call(
            client, "check", source=(EXAMPLES / "gemm_stale_b.py").read_text(), filename="mm.py"
        )
        assert not err and out["version"] == 1
        df002 = [d for d in out["diagnostics"] if d["code"] == "DF002"]
        assert df002 and df002[0]["path"] == "mm.py" and df002[0]["line"] == 37 and df002[0]["witness"]

        err, out = await call(client, "check", path="examples")
        assert not err and out["summary"]["files"] >= 4 and out["complete"]
        assert {d["path"].split("/")[-1] for d in out["diagnostics"] if d["severity"] == "error"} == {
            "gemm_stale_b.py"
        }

        err, msg = await call(client, "check")
        assert err and "exactly one of `path`" in msg

        err, out = await call(client, "explain_finding", code="df002")
        assert (
            not err and out["name"] == "stale-reduction-pointer" and "Why it matters" in out["documentation"]
        )
        err, msg = await call(client, "explain_finding", code="XX999")
        assert err and "no rule" in msg

        err, out = await call(client, "knowledge_search", query="swizzle program ids for L2 reuse")
        assert not err and out["cards"][0]["id"] == "pid-swizzle-l2"

        err, msg = await call(client, "profile", target=f"{MATMUL}::matmul_kernel")
        assert err and "--allow-run" in msg


async def test_evaluate_candidate_gate1_only_without_allow_run() -> None:
    bug = MATMUL.read_text().replace("b_ptrs += BLOCK_K * stride_bk", "b_ptrs += BLOCK_K * stride_bn")
    assert bug != MATMUL.read_text()
    async with Client(params()) as client:
        err, out = await call(
            client,
            "evaluate_candidate",
            target="examples/naive_matmul.py::matmul_kernel",
            candidate_source=bug,
        )
        assert not err and out["ran"] == ["invariants"] and out["rejected_at"] == "invariants"
        codes = {f["code"] for f in out["gates"][0]["feedback"]}
        assert "DF002" in codes and all(f.get("line") for f in out["gates"][0]["feedback"])
        assert "--allow-run" in out["not_run"]["correctness"]

        err, out = await call(
            client,
            "evaluate_candidate",
            target="examples/naive_matmul.py::matmul_kernel",
            candidate_source=MATMUL.read_text().replace("32, 32, 32", "64, 64, 32"),
        )
        assert not err and out["gates"][0]["passed"] and not out["passed_all"]

        err, msg = await call(
            client, "evaluate_candidate", target="examples/naive_matmul.py", candidate_source="x"
        )
        assert err and "FILE::KERNEL" in msg


async def test_running_tools_with_allow_run() -> None:
    if triton_python() is None:
        pytest.skip("no interpreter with torch + triton (scripts/setup.d/30-triton-cpu.sh installs them)")
    good = MATMUL.read_text().replace("32, 32, 32", "64, 64, 32")
    zeros = MATMUL.read_text().replace("tl.store(c_ptrs, acc.to(", "tl.store(c_ptrs, (acc * 0).to(")
    assert zeros != MATMUL.read_text()
    async with Client(params("--allow-run")) as client:
        err, out = await call(
            client,
            "evaluate_candidate",
            target=f"{MATMUL}::matmul_kernel",
            candidate_source=good,
            backend="cpu",
        )
        assert not err, out
        assert out["ran"] == ["invariants", "correctness", "performance"] and out["verified"]
        assert out["gates"][2]["measured"] is False  # no GPU: performance not measured, so not all passed
        err, out = await call(
            client,
            "evaluate_candidate",
            target=f"{MATMUL}::matmul_kernel",
            candidate_source=zeros,
            backend="cpu",
        )
        assert not err and out["rejected_at"] in ("invariants", "correctness")

        vadd = REPO / "tests" / "profile" / "tasks" / "vadd.py"
        err, out = await call(client, "profile", target=f"{vadd}::add_kernel", backend="cpu")
        assert not err, out
        assert out["kernel"] == "add_kernel" and out["median_ms"] > 0 and out["lens"]
