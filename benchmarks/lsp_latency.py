"""Latency of live diagnostics: didChange -> publishDiagnostics on a 1,000-line, ten-kernel file,
or (`--real`) on ten real files from liger-kernel and fla-core, next to ruff's server.

Usage: python benchmarks/lsp_latency.py [--edits 100] [--debounce-ms 0] [--seed 0]
       python benchmarks/lsp_latency.py --real [--per-kind 5] [--seed 0] [--before TREE]
                                        [--pause-after-open S] [--files N] [--slowest N]

`--real` downloads the pinned wheels once (pip, into the git-ignored benchmarks/.realworld/) and
is described in lsp_realworld.py. What follows is the generated-file mode.

Starts the real server (`python -m argus_lsp.server`) over stdio and talks raw JSON-RPC to it
(tests/lsp/rpc_client.py, the client the tests use too), so no client library sits in the
measured path. The file is generated: ten varied Triton kernels
(elementwise, reductions, softmax, layernorm, matmul, ...) with their launchers. Each edit changes
one character of a numeric constant inside one kernel (and the next edit changes it back),
waits for the publishDiagnostics carrying that version, and records the time since the didChange
was written. The server's debounce is set to --debounce-ms (default 0, so the figure is the
server's own work; in an editor the on-type debounce, 150 ms by default, comes on top).
The same run times a full `check_source` of the file with a cold cache for comparison.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "lsp"))  # the one raw client, shared with the tests

from argus.analyzers import KernelCache, check_source  # noqa: E402
from rpc_client import RpcClient  # noqa: E402

# -- the generated file ---------------------------------------------------------------------------
HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"


def chain(var: str, n: int, seed: int, indent: str = "    ") -> list[str]:
    """n lines of elementwise work on `var` (padding that reads like real epilogue math)."""
    ops = [
        "{v} = {v} * {c} + {d}",
        "{v} = tl.maximum({v}, {d})",
        "{v} = {v} - {c} * {d}",
        "{v} = {v} / ({c} + 1.0)",
    ]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        op = ops[rng.randrange(len(ops))]
        out.append(indent + op.format(v=var, c=f"{1 + (i % 7) / 1000:.4f}", d=f"{(i % 5) / 10:.1f}"))
    return out


def elementwise(k: int, op: str) -> list[str]:
    name = f"ew{k}_kernel"
    body = [
        "@triton.jit",
        f"def {name}(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
        "    pid = tl.program_id(axis=0)",
        "    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)",
        "    mask = offsets < n_elements",
        "    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)",
        "    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)",
        f"    z = x {op} y",
        *chain("z", 81, k),
        "    tl.store(out_ptr + offsets, z, mask=mask)",
        "",
        "",
        f"def ew{k}(x, y):",
        "    out = torch.empty_like(x)",
        "    n = x.numel()",
        "    grid = (triton.cdiv(n, 1024),)",
        f"    {name}[grid](x, y, out, n, BLOCK_SIZE=1024)",
        "    return out",
    ]
    return body


def row_reduce(k: int, kind: str) -> list[str]:
    name = f"row{k}_kernel"
    reduce = {
        "sum": "    r = tl.sum(v, axis=0)",
        "max": "    r = tl.max(v, axis=0)",
        "softmax": "    v = v - tl.max(v, axis=0)\n    e = tl.exp(v)\n    r = e / tl.sum(e, axis=0)",
        "layernorm": "    mean = tl.sum(v, axis=0) / n_cols\n    d = tl.where(mask, v - mean, 0.0)\n"
        "    var = tl.sum(d * d, axis=0) / n_cols\n    r = d / tl.sqrt(var + 1e-5)",
    }[kind]
    store = (
        "    tl.store(out_ptr + row * stride_out, r)"
        if kind in ("sum", "max")
        else ("    tl.store(out_ptr + row * stride_out + cols, r, mask=mask)")
    )
    return [
        "@triton.jit",
        f"def {name}(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):",
        "    row = tl.program_id(0).to(tl.int64)",
        "    cols = tl.arange(0, BLOCK)",
        "    mask = cols < n_cols",
        "    v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)",
        *chain("v", 77, k),
        "    v = tl.where(mask, v, 0.0)"
        if kind != "max" and kind != "softmax"
        else "    v = tl.where(mask, v, -float('inf'))",
        *reduce.split("\n"),
        store,
        "",
        "",
        f"def row{k}(x):",
        "    n_rows, n_cols = x.shape",
        f"    out = torch.empty({'(n_rows,)' if kind in ('sum', 'max') else 'x.shape'}, device=x.device, dtype=torch.float32)",
        "    BLOCK = triton.next_power_of_2(n_cols)",
        f"    {name}[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK)",
        "    return out",
    ]


def matmul(k: int) -> list[str]:
    name = f"mm{k}_kernel"
    return [
        "@triton.jit",
        f"def {name}(",
        "    a_ptr, b_ptr, c_ptr, M, N, K,",
        "    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,",
        "    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,",
        "):",
        "    pid_m = tl.program_id(0)",
        "    pid_n = tl.program_id(1)",
        "    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)",
        "    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)",
        "    offs_k = tl.arange(0, BLOCK_K)",
        "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak",
        "    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "    for k in range(0, tl.cdiv(K, BLOCK_K)):",
        "        k_remaining = K - k * BLOCK_K",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)",
        "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_remaining) & (offs_n[None, :] < N), other=0.0)",
        "        acc += tl.dot(a, b)",
        "        a_ptrs += BLOCK_K * stride_ak",
        "        b_ptrs += BLOCK_K * stride_bk",
        *chain("acc", 69, k),
        "    c = acc.to(c_ptr.dtype.element_ty)",
        "    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn",
        "    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))",
        "",
        "",
        f"def mm{k}(a, b):",
        "    M, K = a.shape",
        "    _, N = b.shape",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)",
        "    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))",
        f"    {name}[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),",
        "                 c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)",
        "    return c",
    ]


def generate() -> str:
    parts = [
        elementwise(0, "+"),
        elementwise(1, "*"),
        row_reduce(2, "sum"),
        matmul(3),
        row_reduce(4, "softmax"),
        elementwise(5, "-"),
        row_reduce(6, "layernorm"),
        matmul(7),
        row_reduce(8, "max"),
        elementwise(9, "/"),
    ]
    return HEADER + "\n\n\n".join("\n".join(p) for p in parts) + "\n"


def published(uri: str, version: int):
    def pred(m: dict) -> bool:
        p = m.get("params") or {}
        return (
            m.get("method") == "textDocument/publishDiagnostics"
            and p.get("uri") == uri
            and p.get("version") == version
        )

    return pred


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--debounce-ms", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--real", action="store_true", help="real files, next to ruff's server")
    ap.add_argument("--per-kind", type=int, default=5, help="--real: edits of each kind per file")
    ap.add_argument(
        "--before",
        type=Path,
        metavar="TREE",
        help="--real: also run the server of another source tree (an export of an older commit) first",
    )
    ap.add_argument(
        "--pause-after-open",
        type=float,
        default=0.0,
        metavar="S",
        help="--real: seconds a reader waits after each file's first diagnostics, before editing",
    )
    ap.add_argument(
        "--files", default=None, metavar="N|A:B", help="--real: only the first N files, or files A to B-1"
    )
    ap.add_argument(
        "--slowest", type=int, default=0, metavar="N", help="--real: list the N edits that cost the most CPU"
    )
    args = ap.parse_args()
    if args.real:
        from lsp_realworld import main as real_main

        return real_main(args.per_kind, args.seed, args.before, args.pause_after_open, args.files, args.slowest)

    text = generate()
    lines = text.split("\n")
    kernels = sum(1 for line in lines if line == "@triton.jit")
    full = []
    for _ in range(5):
        t = time.perf_counter()
        findings = check_source(text, "bench.py", cache=KernelCache())
        full.append((time.perf_counter() - t) * 1000)

    client = RpcClient([sys.executable, "-m", "argus_lsp.server"], REPO)
    uri = (REPO / "benchmarks" / "bench_generated.py").as_uri()
    client.initialize(REPO, ["utf-16"], {"argus": {"debounceMs": args.debounce_ms}})
    version = 1
    t0 = client.open(uri, text, version)
    t_open, _ = client.wait_timed(published(uri, version), timeout=120)

    # one-character edits: a digit of a constant inside a kernel, changed and then changed back
    rng = random.Random(args.seed)
    targets = [(i, line.index("1.00") + 5) for i, line in enumerate(lines) if "1.00" in line]
    latencies = []
    pending_undo = None
    for _ in range(args.edits):
        if pending_undo is None:
            row, col = rng.choice(targets)
            old = lines[row][col]
            new = "9" if old != "9" else "8"
            pending_undo = (row, col, old)
        else:
            row, col, new = pending_undo
            pending_undo = None
        lines[row] = lines[row][:col] + new + lines[row][col + 1 :]
        version += 1
        rng_ = {"start": {"line": row, "character": col}, "end": {"line": row, "character": col + 1}}
        sent = client.change(uri, version, [{"range": rng_, "text": new}])
        got, _ = client.wait_timed(published(uri, version), timeout=120)
        latencies.append((got - sent) * 1000)
    client.close()

    print(f"file: {len(text.splitlines())} lines, {kernels} kernels, {len(findings)} findings")
    print(
        f"server debounce: {args.debounce_ms} ms (set through initializationOptions; the editor default of 150 ms is excluded)"
    )
    print(f"open -> first publishDiagnostics: {(t_open - t0) * 1000:.1f} ms")
    print(
        f"didChange -> publishDiagnostics over {len(latencies)} one-character edits: "
        f"median {statistics.median(latencies):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms, "
        f"max {max(latencies):.1f} ms"
    )
    print(f"full check_source of the same file (cold cache, 5 runs): median {statistics.median(full):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
