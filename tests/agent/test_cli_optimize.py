"""`argus optimize` as a user runs it: the real console entry point in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def argus(*args: str, env: dict | None = None, timeout: float = 400) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-c", "import sys; from argus_lsp.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, timeout=timeout, env=full_env, cwd=ROOT)


def test_help_documents_flags_endpoints_and_gates() -> None:
    r = argus("optimize", "--help")
    assert r.returncode == 0
    for text in ("--policy", "--base-url", "--api-key-env", "--budget", "--minutes", "--target", "--ray",
                 "--report", "--json", "--apply", "vLLM", "Ollama", "correctness", "roofline"):
        assert text in r.stdout, text


def test_usage_and_configuration_errors_exit_2() -> None:
    assert argus("optimize", "examples/naive_matmul.py::matmul_kernel").returncode == 2  # --policy missing
    r = argus("optimize", "examples/nope.py::k", "--policy", "knowledge")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = argus("optimize", "examples/naive_matmul.py::matmul_kernel", "--policy", "llm",
              env={"ARGUS_LLM_BASE_URL": "", "OPENAI_BASE_URL": ""})
    assert r.returncode == 2 and "no endpoint" in r.stderr
    r = argus("optimize", "examples/naive_matmul.py::matmul_kernel", "--policy", "llm", "--base-url",
              "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "ARGUS_TEST_UNSET_VAR")
    assert r.returncode == 2 and "ARGUS_TEST_UNSET_VAR is not set" in r.stderr


def test_knowledge_run_on_cpu_prints_the_diff_changes_nothing_and_exits_1(tmp_path: Path) -> None:
    work = tmp_path / "examples"
    work.mkdir()
    for name in ("naive_matmul.py", "naive_matmul.py.argus.toml"):
        shutil.copy(ROOT / "examples" / name, work / name)
    before = (work / "naive_matmul.py").read_text()
    r = argus("optimize", f"{work}/naive_matmul.py::matmul_kernel", "--policy", "knowledge", "--budget", "1",
              "--backend", "cpu", "--report", str(tmp_path / "rep"), "--apply")
    assert r.returncode == 1, r.stderr  # verified under the interpreter, but not measured: not "better"
    assert r.stdout.startswith("--- a/naive_matmul.py") and "+def _argus_matmul(" in r.stdout
    assert "knowledge" not in "".join(x for x in r.stdout.splitlines() if x.startswith("+") and "import" in x)
    assert "performance was not measured" in r.stderr and "nothing applied" in r.stderr
    assert (work / "naive_matmul.py").read_text() == before
    report = json.loads((tmp_path / "rep" / "optimize.json").read_text())
    assert report["status"] == "unmeasured" and report["candidates_proposed"] == 1
    assert report["command"].startswith("argus optimize ")
    md = (tmp_path / "rep" / "optimize.md").read_text()
    assert "candidates proposed: 1" in md and "| k01 | knowledge:expert |" in md


def test_endpoint_settings_come_from_pyproject(tmp_path: Path) -> None:
    for name in ("naive_matmul.py", "naive_matmul.py.argus.toml"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.argus.optimize]\nbase-url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi-key-env = "ARGUS_TEST_KEY2"\n')
    r = argus("optimize", f"{tmp_path}/naive_matmul.py::matmul_kernel", "--policy", "llm",
              env={"ARGUS_TEST_KEY2": "x", "ARGUS_LLM_BASE_URL": "", "OPENAI_BASE_URL": "", "ARGUS_LLM_MODEL": ""})
    assert r.returncode == 2 and "cannot reach http://127.0.0.1:9/v1" in r.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.argus.optimize]\nbase_url = "x"\n')
    r = argus("optimize", f"{tmp_path}/naive_matmul.py::matmul_kernel", "--policy", "llm")
    assert r.returncode == 2 and "unknown keys" in r.stderr
