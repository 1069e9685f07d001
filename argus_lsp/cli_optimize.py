"""`argus optimize FILE::KERNEL ...`: the agent from a terminal or CI (docs/optimize.md).

Exit status: 0 when a better kernel passed every gate, 1 when none did (or performance could not be
measured), 2 on usage or configuration errors. Without --apply nothing is changed: the diff is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tomllib
from pathlib import Path

IMPROVED, NONE, USAGE = 0, 1, 2

EPILOG = """\
endpoint (llm policy): --base-url, else $ARGUS_LLM_BASE_URL, else $OPENAI_BASE_URL, else base-url in
[tool.argus.optimize] of pyproject.toml; --model, else $ARGUS_LLM_MODEL, else model there; the key is read
from the variable named by --api-key-env (or api-key-env there; default OPENAI_API_KEY; local servers such
as vLLM or Ollama accept any value, e.g. OPENAI_API_KEY=none). Examples:
  argus optimize examples/naive_matmul.py::matmul_kernel --policy knowledge --budget 8 --report out/
  argus optimize k.py::kern --policy llm --base-url http://127.0.0.1:8000/v1 --model qwen2.5-coder
gates: 1 invariants (the checker; no new finding), 2 correctness (fresh random inputs, ragged and served
shapes, NaN-poisoned outputs, both orders, tolerance vs fp32/fp64 reference, anti-cheat), 3 performance
(CUDA events, median, L2 flushed, speedup and % of roofline). Exit: 0 improved, 1 none, 2 usage error."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="argus optimize", description="Optimize a Triton kernel: propose candidates, gate them, report.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="FILE::KERNEL", help="the kernel to optimize: its file and its name")
    p.add_argument("--task", metavar="SIDECAR", help="task spec when it is not FILE.argus.toml")
    p.add_argument("--policy", choices=("knowledge", "llm"), required=True,
                   help="knowledge: offline rewrites from the cards; llm: an OpenAI-compatible endpoint")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (llm policy)")
    p.add_argument("--model", help="model name (llm policy)")
    p.add_argument("--api-key-env", metavar="VAR", help="variable holding the key (default OPENAI_API_KEY)")
    p.add_argument("--budget", type=int, default=12, metavar="N", help="candidates at most (default 12)")
    p.add_argument("--minutes", type=float, default=30.0, metavar="M", help="wall-clock budget (default 30)")
    p.add_argument("--target", dest="runner", default="local", metavar="local|ssh://HOST",
                   help="where candidates run: this machine (default) or a host over SSH")
    p.add_argument("--ssh-config", metavar="FILE", help="ssh -F FILE for an ssh:// target")
    p.add_argument("--ssh-identity", metavar="FILE", help="ssh -i FILE for an ssh:// target")
    p.add_argument("--ray", metavar="ADDRESS", help="fan candidates out on a Ray cluster (one task each)")
    p.add_argument("--report", metavar="DIR", help="write optimize.json, optimize.md and the roofline plot")
    p.add_argument("--json", action="store_true", help="print the JSON report instead of the diff")
    p.add_argument("--apply", action="store_true", help="write the improved kernel into FILE")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs and the search (default 0)")
    p.add_argument("--backend", choices=("auto", "cuda", "cpu"), default="auto",
                   help="cpu forces the Triton interpreter (gates 1-2 only)")
    p.add_argument("--compare", action="append", default=[], metavar="CALLABLE",
                   help="also time this callable on the same inputs (e.g. torch.matmul); repeatable")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per candidate subprocess")
    p.add_argument("--report-stem", default="optimize", metavar="NAME",
                   help="file name stem of the --report files (default optimize)")
    return p


def project_settings(target: str) -> dict:
    """`[tool.argus.optimize]` of the pyproject.toml nearest the kernel file (base-url, model, api-key-env)."""
    from argus.agent.optimize.types import OptimizeError

    from argus_lsp.config import ConfigError, find_pyproject

    try:
        found = find_pyproject(Path(target.partition("::")[0]).parent)
    except ConfigError as exc:
        raise OptimizeError(str(exc)) from None
    if found is None:
        return {}
    try:
        table = tomllib.loads(found.read_text(encoding="utf-8")).get("tool", {}).get("argus", {}).get("optimize", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise OptimizeError(f"{found}: {exc}") from None
    unknown = sorted(set(table) - {"base-url", "model", "api-key-env"})
    if unknown:
        raise OptimizeError(f"{found}: [tool.argus.optimize]: unknown keys {unknown} (base-url, model, api-key-env)")
    return table


def _request(args: argparse.Namespace):
    from argus.agent.optimize.types import LLMSettings, OptimizeError, OptimizeRequest

    if args.budget < 1 or args.minutes <= 0:
        raise OptimizeError("--budget must be >= 1 and --minutes > 0")
    conf = project_settings(args.target)  # flags win over the environment, which wins over pyproject.toml
    llm = LLMSettings(
        base_url=args.base_url or os.environ.get("ARGUS_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        or conf.get("base-url"),
        model=args.model or os.environ.get("ARGUS_LLM_MODEL") or conf.get("model"),
        api_key_env=args.api_key_env or conf.get("api-key-env") or "OPENAI_API_KEY",
    )
    return OptimizeRequest(
        target=args.target, task=args.task, policy=args.policy, budget=args.budget, minutes=args.minutes,
        runner=args.runner, ray_address=args.ray, backend=args.backend, seed=args.seed, llm=llm,
        compare=list(args.compare), timeout_s=args.timeout,
        ssh={k: v for k, v in (("config", args.ssh_config), ("identity", args.ssh_identity)) if v},
    )


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE
    from argus.agent.optimize import report
    from argus.agent.optimize.api import optimize
    from argus.agent.optimize.types import OptimizeError

    command = "argus optimize " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    try:
        request = _request(args)
        path = Path(args.target.partition("::")[0])
        before = path.read_text(encoding="utf-8") if path.is_file() else None

        def progress(stage: str, n: int) -> None:
            if not args.json:
                print(f"argus optimize: {stage} ({n} candidates)", file=sys.stderr)

        result = optimize(request, progress=progress)
    except OptimizeError as exc:
        print(f"argus optimize: {exc}", file=sys.stderr)
        return USAGE
    if args.report:
        for p in report.write(result, args.report, command, stem=args.report_stem):
            print(f"argus optimize: wrote {p}", file=sys.stderr)
    if args.json:
        print(json.dumps({**result.to_json(), "command": command}, indent=2, default=str))
    else:
        print(report.markdown(result, command) if not result.patch else result.patch, end="")
        print(f"argus optimize: {result.status}: {result.stop_reason}", file=sys.stderr)
        for note in result.notes:
            print(f"argus optimize: note: {note}", file=sys.stderr)
    if args.apply:
        if not result.improved or result.new_source is None:
            print("argus optimize: --apply: nothing applied (no candidate passed every gate)", file=sys.stderr)
        elif path.read_text(encoding="utf-8") != before:
            print(f"argus optimize: --apply: {path} changed while optimizing; nothing applied", file=sys.stderr)
            return NONE
        else:
            path.write_text(result.new_source, encoding="utf-8")
            print(f"argus optimize: applied to {path}", file=sys.stderr)
    return IMPROVED if result.improved else NONE


if __name__ == "__main__":
    sys.exit(main())
