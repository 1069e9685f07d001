"""Argus as Model Context Protocol tools, so that coding agents can use it as their gate.

    argus mcp [--allow-run]          # stdio; see docs/mcp.md for a client configuration

Tools (each returns one JSON object):
- `check`: findings of a file, folder or source text, in the `argus check --format json` shape;
- `explain_finding`: a rule's documentation by code (`DF002`) or name;
- `knowledge_search`: technique cards ranked for a query (the agent's own retrieval);
- `evaluate_candidate`: the optimize gates on a candidate source for FILE::KERNEL;
- `profile`: time and roofline of FILE::KERNEL on the local GPU (or the Triton interpreter).

`check`, `explain_finding` and `knowledge_search` never run code. `profile` runs the user's task and
is refused unless the server was started with `--allow-run`; `evaluate_candidate` without it runs
gate 1 only (the checker, on the candidate's text) and says that gates 2 and 3 were not run. The
tool functions are plain Python (`Tools`); `build_server` only registers them with the `mcp` SDK.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from argus_lsp.discover import Candidate, candidates
from argus_lsp.render.json import render as render_json
from argus_lsp.render.report import Report

# The methods of `Tools` served as MCP tools, in the order `tools/list` gives them.
TOOL_NAMES = ("check", "explain_finding", "knowledge_search", "evaluate_candidate", "profile")
RUN_REFUSED = (
    "refused: this tool runs the user's code; start the server with `argus mcp --allow-run` to allow it"
)


class ToolInputError(ValueError):
    """Bad arguments from the calling agent; the message says what to send instead."""


class Tools:
    """The tools' behaviour, independent of the protocol (tests call these directly too).

    Each public method is one tool (TOOL_NAMES): its signature is the tool's input schema and its
    docstring the description the agent reads, so keep both written for the agent."""

    def __init__(self, allow_run: bool = False, root: Path | None = None) -> None:
        self.allow_run = allow_run
        self.root = root or Path.cwd()

    def _path(self, path: str) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.root / p

    def check(
        self,
        path: str | None = None,
        source: str | None = None,
        filename: str = "kernel.py",
        select: list[str] | None = None,
        ignore: list[str] | None = None,
    ) -> dict[str, Any]:
        """Check Triton kernels: `path` (file or folder) or `source` text. Returns findings
        (code, severity, 1-based line/column, message, witness, fix) as `argus check --format json`."""
        from argus_lsp.cli import tool_version
        from argus_lsp.cli_check import RunProblems, check_text, read_text
        from argus_lsp.settings import Settings

        if (path is None) == (source is None):
            raise ToolInputError(
                "check wants exactly one of `path` (a file or folder) or `source` (Python text)"
            )
        report, problems = Report(tool_version=tool_version()), RunProblems()
        settings = Settings(
            select=tuple(c.upper() for c in select) if select else None,
            ignore=tuple(c.upper() for c in ignore) if ignore else (),
        )

        def check_one(cand: Candidate) -> None:
            data = read_text(cand, problems)
            if data is None:
                return
            try:
                kernels, findings = check_text(data, cand.display, settings)
            except Exception:  # one file's crash must not hide the others' findings
                problems.internal += 1
                return
            report.add_file(cand.display, data, kernels, findings)

        if source is not None:
            with tempfile.TemporaryDirectory(prefix="argus-mcp-") as tmp:
                file = Path(tmp) / Path(filename).name
                file.write_text(source, encoding="utf-8")
                check_one(Candidate(filename, file))
        else:
            target = self._path(path)
            if not target.exists():
                raise ToolInputError(f"check: {path} does not exist (relative paths start at {self.root})")
            for cand in candidates([str(target)]):
                check_one(cand)
        out = json.loads(render_json(report))
        out["complete"] = not problems.any
        return out

    def explain_finding(self, code: str) -> dict[str, Any]:
        """The documentation of an Argus rule by code (DF002) or name: what it checks, why, an
        example, the fix."""
        from argus_lsp.render.rules import find_rule, load_rule_docs

        load_rule_docs()
        info = find_rule(code)
        if info is None:
            raise ToolInputError(
                f"explain_finding: no rule {code!r} (codes look like DF002; `argus rules` lists them)"
            )
        return {
            "code": info.code,
            "name": info.name,
            "severity": info.severity.value,
            "summary": info.summary,
            "documentation": info.markdown(),
            "url": info.docs_url,
        }

    def knowledge_search(
        self,
        query: str,
        code: str | None = None,
        bottleneck: str | None = None,
        pattern: str | None = None,
        limit: int = 5,
    ) -> dict[str, Any]:
        """Search the knowledge library's technique cards (autotuning, pid swizzle, pipelining, ...)
        for a query, optionally filtered by code, bottleneck, pattern."""
        from argus.knowledge.retrieve import recommend

        if not query.strip() and not (code or bottleneck or pattern):
            raise ToolInputError("knowledge_search wants a query (or a code, bottleneck or pattern)")
        hits = recommend(
            [code.upper()] if code else [],
            bottleneck=bottleneck,
            pattern=pattern,
            text=query,
            limit=max(1, min(limit, 20)),
        )
        return {
            "cards": [
                {
                    **h.to_dict(),
                    "codes": list(h.card.codes),
                    "bottlenecks": list(h.card.bottlenecks),
                    "patterns": list(h.card.patterns),
                    "kernel": h.card.kernel,
                    "body": h.card.body,
                }
                for h in hits
            ]
        }

    def evaluate_candidate(
        self,
        target: str,
        candidate_source: str,
        task: str | None = None,
        backend: str = "auto",
        timeout_s: float = 600.0,
    ) -> dict[str, Any]:
        """Gate a candidate: the full new text of FILE (target FILE::KERNEL). Gate 1 (invariants: no
        error finding, none the user's kernel lacks) always; gates 2 (correctness) and 3 (speed)
        only when the server allows running code."""
        file, kernel = self._target(target)
        if not self.allow_run:
            return self._gate1_only(file, kernel, candidate_source, task)
        from argus.agent.optimize.api import OptimizeError, evaluate_candidate

        try:
            attempt = evaluate_candidate(
                f"{file}::{kernel}", candidate_source, task=task, backend=backend, timeout_s=timeout_s
            )
        except OptimizeError as exc:
            raise ToolInputError(f"evaluate_candidate: {exc}") from None
        return {**_attempt_json(attempt), "ran": [g.gate for g in attempt.gates]}

    def _gate1_only(self, file: Path, kernel: str, source: str, task: str | None) -> dict[str, Any]:
        """Gate 1 as the agent runs it (Evaluator.gate1): the checker on the text, nothing executed."""
        from argus.agent.optimize.api import OptimizeError, OptimizeRequest, load_request_task
        from argus.agent.optimize.gate_invariants import check_invariants
        from argus.agent.optimize.types import Attempt, Candidate

        try:
            t = load_request_task(OptimizeRequest(target=f"{file}::{kernel}", task=task))
            original = Path(t.path).read_text(encoding="utf-8")
        except (OptimizeError, OSError) as exc:
            raise ToolInputError(f"evaluate_candidate: {exc}") from None
        candidate = Candidate("candidate", source, "external")
        protected = tuple(n for n in (t.reference,) if n)
        required = tuple(n for n in (t.launcher,) if n)
        attempt = Attempt(
            candidate, [check_invariants(original, candidate, str(t.path), protected, required)]
        )
        return {
            **_attempt_json(attempt),
            "ran": ["invariants"],
            "not_run": {"correctness": RUN_REFUSED, "performance": RUN_REFUSED},
        }

    def profile(self, target: str, backend: str = "auto", timeout_s: float = 600.0) -> dict[str, Any]:
        """Profile FILE::KERNEL's task: time, TFLOP/s, TB/s, roofline class. Runs the user's code:
        refused unless the server was started with --allow-run."""
        if not self.allow_run:
            raise ToolInputError(f"profile {RUN_REFUSED}")
        from argus.agent.profile.api import ProfileError, profile

        file, kernel = self._target(target)
        try:
            return profile(f"{file}::{kernel}", backend=backend, timeout=timeout_s).to_json()
        except ProfileError as exc:
            raise ToolInputError(f"profile: {exc}") from None

    def _target(self, target: str) -> tuple[Path, str]:
        file, sep, kernel = target.rpartition("::")
        if not sep or not file or not kernel:
            raise ToolInputError(f"target must be FILE::KERNEL, got {target!r}")
        path = self._path(file)
        if not path.is_file():
            raise ToolInputError(f"{file} is not a file (relative paths start at {self.root})")
        return path, kernel


def _attempt_json(attempt) -> dict[str, Any]:
    return {
        "passed_all": attempt.passed,
        "verified": attempt.verified,
        "rejected_at": attempt.rejected_at,
        "speedup": attempt.speedup,
        "gates": [asdict(g) for g in attempt.gates],
    }


def build_server(tools: Tools):
    """The MCP server serving the TOOL_NAMES methods of `tools` (the only place `mcp` is imported)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from argus_lsp.cli import tool_version

    def answering(method: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """A bad argument is an anticipated failure: the agent reads the message, no traceback is logged."""

        @functools.wraps(method)  # the SDK reads name, signature and annotations through __wrapped__
        def tool(**arguments: Any) -> dict[str, Any]:
            try:
                return method(**arguments)
            except ToolInputError as exc:
                raise ToolError(str(exc)) from None

        return tool

    server = MCPServer(
        "argus",
        version=tool_version(),
        instructions=(
            "Argus checks data-flow invariants of Triton GPU kernels. Use `check` on every kernel you write "
            "and fix error and warning findings (each comes with a witness); `explain_finding` explains a code; "
            "`evaluate_candidate` gates a rewrite of a kernel against the user's own."
        ),
    )

    for name in TOOL_NAMES:
        method = getattr(tools, name)
        # The method's signature is the tool's input schema; its docstring, on one line, the description.
        server.add_tool(answering(method), description=" ".join(inspect.getdoc(method).split()))
    return server


def serve(allow_run: bool = False, root: str | None = None) -> None:
    """Serve on stdio until the client closes the connection."""
    build_server(Tools(allow_run, Path(root) if root else Path(os.getcwd()))).run("stdio")
