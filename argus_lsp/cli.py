"""The `argus` command (and `argus-lsp`): check kernels in CI, start the server, reach the agent.

`argus check` is a gate, so its exit status is the contract of DESIGN.md: 0 clean, 1 when an
error or warning was found, 2 when the run itself went wrong (bad usage, a file that could not be
read, an internal error). It never prints a traceback: a crash on one file is reported and the
other files are still checked. `knowledge` and `profile` belong to other packages and are imported
only when asked for, so `argus check` starts fast and needs none of their dependencies.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TextIO

from analyzers import check_source, list_kernels, unknown_codes
from argus_lsp import config
from argus_lsp.discover import Candidate, candidates, mentions_triton, missing_paths
from argus_lsp.render import RENDERERS, Report
from argus_lsp.render.rules import find_rule, load_rule_docs, rule_table

USAGE_ERROR = 2

# Subcommands that own their flags: `argus NAME ARGS...` calls MODULE.main(ARGS) -> int.
DELEGATES: dict[str, tuple[str, str]] = {
    "knowledge": ("knowledge.cli", "technique cards: list, show ID, search TEXT"),
    "profile": ("agent.profile.cli", "profile a kernel on a GPU: FILE::KERNEL ..."),
    "optimize": ("argus_lsp.cli_optimize", "optimize a kernel: candidates gated by invariants, tests, timing"),
    "mcp": ("argus_lsp.cli_mcp", "Model Context Protocol tools for coding agents (stdio)"),
}


def tool_version() -> str:
    try:
        return version("argus-lsp")
    except PackageNotFoundError:
        return "0+unknown"


def _err(message: str) -> None:
    print(f"argus: {message}", file=sys.stderr)


def parse_codes(value: str | None) -> list[str] | None:
    """`--select DF,MB001` -> ["DF", "MB001"]; None when the flag was not given."""
    if value is None:
        return None
    return [part.strip().upper() for part in value.split(",") if part.strip()]


# --- argus check ------------------------------------------------------------------------------


@dataclass
class RunProblems:
    """What kept a check from being complete; any of these makes the exit status 2."""

    unreadable: int = 0
    internal: int = 0

    @property
    def any(self) -> bool:
        return bool(self.unreadable or self.internal)


def _decode_error(display: str, data: bytes, exc: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"cannot read {display}: not UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, byte {column})"


def check_file(
    cand: Candidate, report: Report, select: list[str] | None, ignore: list[str] | None, problems: RunProblems
) -> None:
    """Check one file into `report`; unreadable files and crashes go to stderr and `problems`."""
    try:
        data = cand.path.read_bytes()
    except OSError as exc:
        _err(f"cannot read {cand.display}: {exc.strerror or exc}")
        problems.unreadable += 1
        return
    if not mentions_triton(data):
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _err(_decode_error(cand.display, data, exc))
        problems.unreadable += 1
        return
    try:
        kernels = list_kernels(data)
        findings = check_source(data, cand.display, select=select, ignore=ignore) if kernels else []
    except Exception as exc:  # one file's crash must not hide the other files' findings
        _err(f"internal error while checking {cand.display}: {type(exc).__name__}: {exc}")
        if os.environ.get("ARGUS_DEBUG"):
            traceback.print_exc()
        problems.internal += 1
        return
    report.add_file(cand.display, data, len(kernels), findings)


def _selection(args: argparse.Namespace) -> tuple[list[str] | None, list[str] | None]:
    """CLI flags override `[tool.argus]`; unknown codes are a usage error (raised as ValueError)."""
    settings = config.load(Path.cwd())
    select = parse_codes(args.select) if args.select is not None else settings.select
    ignore = parse_codes(args.ignore) if args.ignore is not None else settings.ignore
    for flag, cli_value, codes in (("--select", args.select, select), ("--ignore", args.ignore, ignore)):
        bad = unknown_codes(codes or [])
        if bad:
            where = flag if cli_value is not None else f"{settings.source} ([tool.argus] {flag[2:]})"
            raise ValueError(
                f"unknown rule code{'s' if len(bad) > 1 else ''} in {where}: "
                f"{', '.join(bad)} (`argus rules` lists them)"
            )
    return select, ignore


def _use_colour(args: argparse.Namespace, stream: TextIO) -> bool:
    return (
        args.format == "text" and args.output is None and not os.environ.get("NO_COLOR") and stream.isatty()
    )


def run_check(args: argparse.Namespace) -> int:
    paths = args.paths or ["."]
    missing = missing_paths(paths)
    if missing:
        for path in missing:
            _err(f"no such file or directory: {path}")
        return USAGE_ERROR
    try:
        select, ignore = _selection(args)
    except (config.ConfigError, ValueError) as exc:
        _err(str(exc))
        return USAGE_ERROR

    report = Report(tool_version=tool_version())
    problems = RunProblems()
    for cand in candidates(paths):
        check_file(cand, report, select, ignore, problems)

    text = RENDERERS[args.format](report, color=_use_colour(args, sys.stdout))
    if args.output is not None:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            _err(f"cannot write {args.output}: {exc.strerror or exc}")
            return USAGE_ERROR
    else:
        sys.stdout.write(text)
        sys.stdout.flush()

    if problems.any:
        return USAGE_ERROR
    return 1 if report.failed and not args.exit_zero else 0


# --- argus serve, rules, and the delegated subcommands -----------------------------------------


def _valid_tcp(value: str) -> bool:
    host, sep, port = value.rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def run_serve(tcp: str | None) -> int:
    if tcp is not None and not _valid_tcp(tcp):
        _err(f"--tcp expects HOST:PORT (e.g. 127.0.0.1:2087), not {tcp!r}")
        return USAGE_ERROR
    try:
        from argus_lsp.server import run_server
    except ModuleNotFoundError as exc:
        _err(f"cannot start the language server: module {exc.name!r} is not installed")
        return USAGE_ERROR
    return int(run_server(tcp) or 0)


def run_rules(args: argparse.Namespace) -> int:
    load_rule_docs()
    if args.code is None:
        sys.stdout.write(rule_table())
        return 0
    info = find_rule(args.code)
    if info is None:
        _err(f"unknown rule: {args.code} (`argus rules` lists them)")
        return USAGE_ERROR
    sys.stdout.write(info.markdown())
    return 0


def run_delegate(command: str, rest: list[str]) -> int:
    module_name, _ = DELEGATES[command]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == module_name or module_name.startswith(exc.name + ".")):
            _err(f"`argus {command}` is not available: module {module_name} is not installed")
        else:
            _err(
                f"`argus {command}` needs the module {exc.name!r}, which is not installed "
                "(try: pip install 'argus-lsp[agent]')"
            )
        return USAGE_ERROR
    result = module.main(rest)
    return int(result or 0)


# --- parsers and entry points ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argus", description="Data-flow invariant checker and language server for Triton kernels."
    )
    parser.add_argument("--version", action="version", version=f"argus {tool_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="check Triton kernels in files and folders",
        description="Check every Triton kernel in the given files and folders (default: the current folder).",
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (folders: *.py files)")
    check.add_argument(
        "--format", choices=sorted(RENDERERS), default="text", help="output format (default: text)"
    )
    check.add_argument(
        "--select", metavar="CODES", help="comma-separated code prefixes to report, e.g. DF,MB001"
    )
    check.add_argument("--ignore", metavar="CODES", help="comma-separated code prefixes to leave out")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when errors or warnings are found"
    )
    check.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    check.set_defaults(handler=run_check)

    serve = sub.add_parser("serve", help="start the language server (stdio by default)")
    _add_serve_flags(serve)
    serve.set_defaults(handler=lambda a: run_serve(a.tcp))

    rules = sub.add_parser("rules", help="list the rules, or show one rule's documentation")
    rules.add_argument("code", nargs="?", metavar="CODE", help="a code (DF002) or a rule name")
    rules.set_defaults(handler=run_rules)

    for name, (_, summary) in DELEGATES.items():
        delegated = sub.add_parser(name, help=summary, add_help=False)
        delegated.add_argument("rest", nargs=argparse.REMAINDER)
        delegated.set_defaults(handler=lambda a, name=name: run_delegate(name, a.rest))
    return parser


def _add_serve_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    parser.add_argument("--stdio", action="store_true", help="use stdio (the default; editors pass it)")


def _exit_code(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else USAGE_ERROR


def _guarded(run) -> int:
    """Run a command so that no traceback ever reaches the user: Ctrl-C is 130, a crash is 2."""
    try:
        return run()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `argus check | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        _err(f"internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("ARGUS_DEBUG"):
            traceback.print_exc()
        return USAGE_ERROR


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `argus` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        if args_list and args_list[0] in DELEGATES:
            return run_delegate(args_list[0], args_list[1:])
        parser = build_parser()
        try:
            args = parser.parse_args(args_list)
        except SystemExit as exc:  # argparse reports usage errors (2) and --help/--version (0)
            return _exit_code(exc)
        if args.command is None:
            parser.print_help(sys.stderr)
            return USAGE_ERROR
        return args.handler(args)

    return _guarded(run)


def serve_main(argv: list[str] | None = None) -> int:
    """Entry point of the `argus-lsp` console script: the same as `argus serve`."""
    parser = argparse.ArgumentParser(prog="argus-lsp", description="Argus language server.")
    parser.add_argument("--version", action="version", version=f"argus-lsp {tool_version()}")
    _add_serve_flags(parser)
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        return _exit_code(exc)
    return _guarded(lambda: run_serve(args.tcp))
