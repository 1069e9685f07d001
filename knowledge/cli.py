"""`argus knowledge list|show ID|search TEXT`: the technique library from the command line.

    argus knowledge list [--code PF002] [--bottleneck memory] [--pattern gemm] [--json]
    argus knowledge show ID [--json]
    argus knowledge search TEXT... [--code C] [--bottleneck B] [--pattern P] [--limit N] [--json]

`search` ranks with the same scoring the agent uses (retrieve.recommend), so what a user sees here is
what the agent would be handed. Exit status: 0 success, 1 nothing found (unknown ID, no match),
2 usage error or a broken card.
"""

from __future__ import annotations

import argparse
import json
import sys

from argus.knowledge.cards import Card, CardError, get_card, load_cards
from argus.knowledge.retrieve import by_bottleneck, by_code, by_pattern, recommend


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="argus knowledge", description="Technique cards for Triton kernel performance.")
    sub = ap.add_subparsers(dest="command", required=True)

    def filters(p: argparse.ArgumentParser) -> None:
        p.add_argument("--code", help="a rule code, e.g. PF002")
        p.add_argument("--bottleneck", choices=["memory", "compute", "latency"], help="what bounds the kernel")
        p.add_argument("--pattern", choices=["gemm", "attention", "moe", "reduction", "elementwise"],
                       help="the kind of kernel")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    filters(sub.add_parser("list", help="every card (filtered)"))
    show = sub.add_parser("show", help="one card in full")
    show.add_argument("id", help="a card id, as `argus knowledge list` prints it")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    search = sub.add_parser("search", help="cards ranked for free text (and filters)")
    search.add_argument("text", nargs="+", help="words to look for in the cards")
    search.add_argument("--limit", type=int, default=5, help="at most this many cards (default: 5)")
    filters(search)
    return ap


def _filtered(args: argparse.Namespace) -> list[Card]:
    cards = load_cards()
    if args.code:
        cards = by_code(args.code, cards)
    if args.bottleneck:
        cards = by_bottleneck(args.bottleneck, cards)
    if args.pattern:
        cards = by_pattern(args.pattern, cards)
    return cards


def _line(card: Card) -> str:
    return f"{card.id:28s} {','.join(card.codes) or '-':14s} {','.join(card.bottlenecks):16s} {card.title}"


def main(argv: list[str]) -> int:
    """Entry point wired to `argus knowledge`; returns the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code or 0)
    try:
        if args.command == "list":
            cards = _filtered(args)
            if args.json:
                print(json.dumps([c.to_dict(with_body=False) for c in cards], indent=1))
            else:
                for card in cards:
                    print(_line(card))
            if not cards:
                print("argus knowledge: no card matches these filters", file=sys.stderr)
            return 0 if cards else 1
        if args.command == "show":
            card = get_card(args.id)
            if card is None:
                print(f"argus knowledge: no card {args.id!r} (see `argus knowledge list`)", file=sys.stderr)
                return 1
            if args.json:
                print(json.dumps(card.to_dict(), indent=1))
            else:
                print(f"# {card.title}  [{card.id}]")
                print(f"codes: {', '.join(card.codes) or '-'}   bottlenecks: {', '.join(card.bottlenecks)}   "
                      f"patterns: {', '.join(card.patterns)}   targets: {', '.join(card.targets)}")
                print(f"reference kernel: {card.kernel}")
                for ev in card.evidence:
                    print(f"evidence: {ev['gpu']} ({ev['date']}): {ev['effect']}  [{ev['command']}]")
                print()
                print(card.body, end="")
            return 0
        # search
        pool = _filtered(args)
        hits = recommend([args.code] if args.code else [], bottleneck=args.bottleneck, pattern=args.pattern,
                         text=" ".join(args.text), limit=args.limit, cards=pool)
        hits = [h for h in hits if "text" in h.reasons]
        if args.json:
            print(json.dumps([h.to_dict() for h in hits], indent=1))
        else:
            for h in hits:
                print(f"{h.score:6.2f}  {_line(h.card)}")
        if not hits:
            print(f"argus knowledge: no card matches {' '.join(args.text)!r}", file=sys.stderr)
        return 0 if hits else 1
    except CardError as exc:
        print(f"argus knowledge: broken card: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
