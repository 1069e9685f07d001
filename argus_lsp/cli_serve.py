"""`argus serve` and the `argus-lsp` script: start the language server on stdio or TCP.

The server module (pygls, lsprotocol) is imported only here, so `argus check` never pays for it.
"""

from __future__ import annotations

import argparse
import sys

USAGE_ERROR = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    parser.add_argument("--stdio", action="store_true", help="use stdio (the default; editors pass it)")


def valid_tcp(value: str) -> bool:
    host, sep, port = value.rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def serve(tcp: str | None) -> int:
    if tcp is not None and not valid_tcp(tcp):
        print(f"argus: --tcp expects HOST:PORT (e.g. 127.0.0.1:2087), not {tcp!r}", file=sys.stderr)
        return USAGE_ERROR
    try:
        from argus_lsp.server import run_server
    except ModuleNotFoundError as exc:
        print(
            f"argus: cannot start the language server: module {exc.name!r} is not installed", file=sys.stderr
        )
        return USAGE_ERROR
    return int(run_server(tcp) or 0)


def build_parser(prog: str = "argus serve") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Start the Argus language server (stdio by default)."
    )
    if prog == "argus-lsp":
        from argus_lsp.cli import tool_version

        parser.add_argument("--version", action="version", version=f"argus-lsp {tool_version()}")
    add_arguments(parser)
    return parser


def main(argv: list[str], prog: str = "argus serve") -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    return serve(args.tcp)
