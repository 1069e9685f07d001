"""`argus mcp`: the Model Context Protocol server on stdio (argus_lsp/mcp_server.py, docs/mcp.md)."""

from __future__ import annotations

import argparse
import sys

from argus_lsp.mcp_server import TOOL_NAMES


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="argus mcp",
        description=f"Serve Argus's tools ({', '.join(TOOL_NAMES)}) to a coding agent over the Model "
        "Context Protocol, on stdin/stdout.",
    )
    parser.add_argument(
        "--allow-run",
        action="store_true",
        help="allow the tools that run the user's code: profile, and gates 2-3 of evaluate_candidate",
    )
    parser.add_argument(
        "--root", help="where relative paths in tool arguments start (default: the current directory)"
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        import mcp.server.mcpserver  # noqa: F401  (the SDK, from the agent extra)
    except ImportError as exc:
        print(f"argus mcp: the `mcp` package is missing ({exc}); install `argus-lsp[agent]`", file=sys.stderr)
        return 2
    from argus_lsp.mcp_server import serve

    serve(allow_run=args.allow_run, root=args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
