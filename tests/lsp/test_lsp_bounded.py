"""The language server on odd but legal files (issue 12 item 4): while a kernel past its time
budget, a tile over Triton's cap and huge constants are being checked, a hover on another
document is answered; then each odd file gets AR001 "budget exceeded" or its plain result.

A real server process over stdio (rpc_client.py); the per-kernel budget comes from the editor's
`argus.kernelTimeout` setting.
"""

from __future__ import annotations

import sys

from lsp_support import REPO, mutant, server_env
from rpc_client import RpcClient

FIXTURES = REPO / "tests" / "fixtures" / "bounded"
BUDGET_S = 5  # the nested kernel runs this long; the hover must not wait for it


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.py.txt").read_text()


def codes(diagnostics: list[dict]) -> list[str]:
    return sorted(d["code"] for d in diagnostics)


def test_hover_is_answered_while_odd_files_are_checked_and_each_gets_its_result(tmp_path) -> None:
    env = server_env()
    client = RpcClient([sys.executable, "-P", "-m", "argus_lsp.server"], cwd=tmp_path, env=env)
    try:
        client.initialize(tmp_path, ["utf-16"], {"argus": {"debounceMs": 0, "kernelTimeout": BUDGET_S}})
        small, _, _ = mutant("vector_add_v2")
        near = (tmp_path / "small.py").as_uri()
        client.open(near, small)
        client.published(near, 1)
        odd = {
            name: (tmp_path / f"{name}.py").as_uri()
            for name in ("nested", "tile", "const_pow", "const_str", "grid")
        }
        for name, uri in odd.items():
            client.open(uri, fixture(name))
        row = small.split("\n").index("    mask = offsets < n_elements")
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": near}, "position": {"line": row, "character": 4}}
        )
        assert hover is not None and "mask" in hover["contents"]["value"]
        published = {
            m["params"]["uri"] for m in client.inbox() if m.get("method") == "textDocument/publishDiagnostics"
        }
        assert odd["nested"] not in published, "the over-budget kernel finished before the hover was answered"

        nested = client.published(odd["nested"], 1, timeout=120)
        assert codes(nested) == ["AR001"]
        assert f"budget exceeded: this kernel past {BUDGET_S} s of analysis" in nested[0]["message"]
        tile = client.published(odd["tile"], 1, timeout=120)
        assert codes(tile) == ["AR001"] and "16384 x 16384" in tile[0]["message"]
        for name in ("const_pow", "const_str", "grid"):
            assert client.published(odd[name], 1, timeout=120) == [], name
        assert client.request("shutdown", None) is None  # still answering after all of them
    finally:
        client.close()


def test_a_new_time_budget_rechecks_a_kernel_that_was_past_the_old_one(tmp_path) -> None:
    # the per-kernel cache holds the AR001 of a kernel past its budget: a changed budget must
    # not serve it again
    env = server_env()
    client = RpcClient([sys.executable, "-P", "-m", "argus_lsp.server"], cwd=tmp_path, env=env)
    try:
        client.initialize(tmp_path, ["utf-16"], {"argus": {"debounceMs": 0, "kernelTimeout": 0.5}})
        uri = (tmp_path / "nested.py").as_uri()
        client.open(uri, fixture("nested"))
        assert "past 0.5 s of analysis" in client.published(uri, 1, timeout=120)[0]["message"]
        client.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"argus": {"debounceMs": 0, "kernelTimeout": 0.25}}},
        )
        assert "past 0.25 s of analysis" in client.published(uri, 1, timeout=120)[0]["message"]
    finally:
        client.close()
