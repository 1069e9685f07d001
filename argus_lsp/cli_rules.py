"""`argus rules [CODE]`: the rule table, or one rule's page (the text of docs/rules, SARIF, hover)."""

from __future__ import annotations

import argparse
import sys

from argus_lsp.render.rules import find_rule, load_rule_docs, rule_table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argus rules", description="List the rules, or show one rule's page."
    )
    parser.add_argument("code", nargs="?", metavar="CODE", help="a code (DF002) or a rule name")
    return parser


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    load_rule_docs()
    if args.code is None:
        sys.stdout.write(rule_table())
        return 0
    info = find_rule(args.code)
    if info is None:
        print(f"argus: unknown rule: {args.code} (`argus rules` lists them)", file=sys.stderr)
        return 2
    sys.stdout.write(info.markdown())
    return 0
