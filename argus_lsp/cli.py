"""The `argus` command (and `argus-lsp`): a small registry of subcommands, each in its own module.

Every subcommand is a module with `main(argv: list[str]) -> int` that owns its flags; this file
only picks the module by name, imports it when it is asked for (so `argus check` starts fast and
needs none of the agent's dependencies), and turns what can go wrong around it into one line on
stderr and an exit status: 2 for usage errors everywhere, 130 on Ctrl-C, 2 for a crash, never a
traceback (unless ARGUS_DEBUG is set).

Adding a subcommand is one line in SUBCOMMANDS, e.g.
    "optimize": Subcommand("argus_lsp.cli_optimize", "optimize a kernel: FILE::KERNEL ...", "agent"),
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

USAGE_ERROR = 2


@dataclass(frozen=True)
class Subcommand:
    module: str  # has main(argv) -> int; imported only when the subcommand runs
    summary: str  # one line for `argus --help`
    extra: str | None = None  # the `pip install 'argus-lsp[EXTRA]'` that brings its packages


SUBCOMMANDS: dict[str, Subcommand] = {
    "check": Subcommand("argus_lsp.cli_check", "check Triton kernels in files and folders"),
    "rules": Subcommand("argus_lsp.cli_rules", "list the rules, or show one rule's documentation"),
    "serve": Subcommand("argus_lsp.cli_serve", "start the language server (stdio by default)"),
    "knowledge": Subcommand("argus.knowledge.cli", "technique cards: list, show ID, search TEXT"),
    "profile": Subcommand("argus.agent.profile.cli", "profile a kernel's task on a GPU: FILE::KERNEL ...", "agent"),
    "optimize": Subcommand("argus_lsp.cli_optimize", "optimize a kernel: FILE::KERNEL --policy knowledge|llm", "agent"),
    "mcp": Subcommand("argus_lsp.cli_mcp", "Model Context Protocol tools for coding agents (stdio)", "agent"),
    "record": Subcommand("argus_lsp.cli_record", "run a command once, recording its Triton launches"),
}


def tool_version() -> str:
    try:
        return version("argus-lsp")
    except PackageNotFoundError:
        return "0+unknown"


def _err(message: str) -> None:
    print(f"argus: {message}", file=sys.stderr)


def help_text() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = [
        "usage: argus COMMAND [ARGS ...]",
        "",
        "Data-flow invariant checker and language server for Triton kernels.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {sub.summary}" for name, sub in SUBCOMMANDS.items()),
        "",
        "options:",
        f"  {'-h, --help':<{width}}  show this help and exit",
        f"  {'--version':<{width}}  print the version and exit",
        "",
        "`argus COMMAND --help` shows the options of one command.",
    ]
    return "\n".join(lines) + "\n"


def _missing_module(name: str, sub: Subcommand, exc: ModuleNotFoundError) -> int:
    missing = exc.name or "?"
    if missing == sub.module or sub.module.startswith(missing + "."):
        _err(f"`argus {name}` is not available: module {sub.module} is not installed")
    elif sub.extra is not None:
        _err(
            f"`argus {name}` needs the package {missing.split('.')[0]!r}, which is not installed: "
            f"pip install 'argus-lsp[{sub.extra}]'"
        )
    else:
        _err(f"`argus {name}` needs the module {missing!r}, which is not installed")
    return USAGE_ERROR


def run_subcommand(name: str, argv: list[str]) -> int:
    sub = SUBCOMMANDS[name]
    try:
        module = importlib.import_module(sub.module)
        return int(module.main(argv) or 0)
    except ModuleNotFoundError as exc:  # the command itself, or an optional package it imports
        return _missing_module(name, sub, exc)
    except SystemExit as exc:  # a subcommand's argparse exits 2 on a usage error, 0 on --help
        return _exit_code(exc)


def _unknown_command(word: str) -> int:
    if word.startswith("-"):
        _err(f"unknown option {word!r} (`argus --help` lists the commands)")
        return USAGE_ERROR
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1)
    hint = f"; did you mean `argus {close[0]}`?" if close else f" (commands: {', '.join(SUBCOMMANDS)})"
    _err(f"unknown command {word!r}{hint}")
    return USAGE_ERROR


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else USAGE_ERROR


def _guarded(run: Callable[[], int]) -> int:
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
    """Entry point of the `argus` console script (and `python -m argus_lsp`)."""
    args = list(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        if not args:
            sys.stderr.write(help_text())
            return USAGE_ERROR
        first, rest = args[0], args[1:]
        if first in ("-h", "--help"):
            sys.stdout.write(help_text())
            return 0
        if first == "--version":
            print(f"argus {tool_version()}")
            return 0
        if first in SUBCOMMANDS:
            return run_subcommand(first, rest)
        return _unknown_command(first)

    return _guarded(run)


def serve_main(argv: list[str] | None = None) -> int:
    """Entry point of the `argus-lsp` console script: the same as `argus serve`."""
    from argus_lsp import cli_serve

    args = list(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        try:
            return cli_serve.main(args, prog="argus-lsp")
        except SystemExit as exc:  # --version
            return _exit_code(exc)

    return _guarded(run)
