"""Technique cards: markdown files with a small front matter, loaded without a YAML dependency.

The front matter is the subset of YAML the cards use, and nothing more:

    ---
    id: pid-swizzle-l2
    title: Program-id swizzle (GROUP_M) for L2 reuse
    codes: [PF002]
    bottlenecks: [memory]
    patterns: [gemm, moe]
    targets: [sm90, gfx942]
    kernel: knowledge/kernels/gemm.py
    evidence:
      - gpu: H200
        effect: "..."
        date: 2026-11-30
        command: "..."
    ---

Scalars are `key: value` (quotes optional), lists are `[a, b]`, and `evidence` is a list of flat maps
written as `- key: value` items. Parsing this subset ourselves keeps the core installable with no
PyYAML, and a card that strays from it fails loudly in the tests rather than loading half.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

CARDS_DIR = Path(__file__).resolve().parent / "cards"
REPO_ROOT = Path(__file__).resolve().parents[1]
REQUIRED_KEYS = ("id", "title", "codes", "bottlenecks", "patterns", "targets", "evidence", "kernel")
REQUIRED_SECTIONS = ("When to use", "Mechanism", "Evidence", "Caveats")
BOTTLENECKS = frozenset({"memory", "compute", "latency"})
PATTERNS = frozenset({"gemm", "attention", "moe", "reduction", "elementwise"})


class CardError(ValueError):
    """A card file that does not follow the format (the message names the file and the problem)."""


@dataclass(frozen=True)
class Card:
    """One technique: what it answers (rule codes, bottlenecks, patterns) and the prose that explains it."""

    id: str
    title: str
    codes: tuple[str, ...]
    bottlenecks: tuple[str, ...]
    patterns: tuple[str, ...]
    targets: tuple[str, ...]
    evidence: tuple[dict[str, str], ...]
    kernel: str
    body: str
    path: Path
    sections: dict[str, str] = field(default_factory=dict)

    def to_dict(self, with_body: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id, "title": self.title, "codes": list(self.codes),
            "bottlenecks": list(self.bottlenecks), "patterns": list(self.patterns),
            "targets": list(self.targets), "evidence": [dict(e) for e in self.evidence],
            "kernel": self.kernel, "path": str(self.path),
        }
        if with_body:
            out["body"] = self.body
        return out


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _list(text: str, where: str) -> tuple[str, ...]:
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise CardError(f"{where}: expected a [a, b] list, got {text!r}")
    inner = text[1:-1].strip()
    return tuple(_scalar(x) for x in inner.split(",")) if inner else ()


def parse_front_matter(text: str, where: str = "<card>") -> tuple[dict[str, object], str]:
    """Splits a card into its front matter (a dict) and its markdown body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise CardError(f"{where}: the card must start with a '---' front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise CardError(f"{where}: the front matter has no closing '---'") from None
    meta: dict[str, object] = {}
    current_list: list[dict[str, str]] | None = None
    for lineno, raw in enumerate(lines[1:end], start=2):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if indent and current_list is not None:
            if line.startswith("- "):
                current_list.append({})
                line = line[2:]
            if not current_list:
                raise CardError(f"{where}:{lineno}: a list item must start with '- '")
            key, sep, value = line.partition(":")
            if not sep:
                raise CardError(f"{where}:{lineno}: expected 'key: value' in a list item")
            current_list[-1][key.strip()] = _scalar(value)
            continue
        key, sep, value = line.partition(":")
        if not sep or indent:
            raise CardError(f"{where}:{lineno}: expected 'key: value', got {raw!r}")
        key, value = key.strip(), value.strip()
        if value == "":
            current_list = []
            meta[key] = current_list
        elif value.startswith("["):
            meta[key] = _list(value, f"{where}:{lineno}")
            current_list = None
        else:
            meta[key] = _scalar(value)
            current_list = None
    return meta, "\n".join(lines[end + 1:]).strip() + "\n"


def split_sections(body: str) -> dict[str, str]:
    """`## Heading` -> the text under it (up to the next `## `)."""
    out: dict[str, str] = {}
    parts = re.split(r"^## +(.+?)\s*$", body, flags=re.M)
    for i in range(1, len(parts), 2):
        out[parts[i].strip()] = parts[i + 1].strip()
    return out


def parse_card(text: str, path: Path) -> Card:
    """Builds a Card from one file's text; raises CardError for a missing key, section or bad value."""
    where = str(path)
    meta, body = parse_front_matter(text, where)
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise CardError(f"{where}: missing front-matter keys {missing}")
    sections = split_sections(body)
    absent = [s for s in REQUIRED_SECTIONS if s not in sections]
    if absent:
        raise CardError(f"{where}: missing sections {absent}")

    def tup(key: str) -> tuple[str, ...]:
        value = meta[key]
        if not isinstance(value, tuple):
            raise CardError(f"{where}: {key} must be a [..] list")
        return value

    evidence = meta["evidence"]
    if not isinstance(evidence, list) or not evidence:
        raise CardError(f"{where}: evidence must be a non-empty list of '- gpu: ...' items")
    for item in evidence:
        lacking = [k for k in ("gpu", "effect", "date", "command") if not item.get(k)]
        if lacking:
            raise CardError(f"{where}: an evidence item lacks {lacking}")
    bad = set(tup("bottlenecks")) - BOTTLENECKS
    if bad:
        raise CardError(f"{where}: unknown bottlenecks {sorted(bad)}")
    bad = set(tup("patterns")) - PATTERNS
    if bad:
        raise CardError(f"{where}: unknown patterns {sorted(bad)}")
    return Card(
        id=str(meta["id"]), title=str(meta["title"]), codes=tup("codes"), bottlenecks=tup("bottlenecks"),
        patterns=tup("patterns"), targets=tup("targets"), evidence=tuple(dict(e) for e in evidence),
        kernel=str(meta["kernel"]), body=body, path=path, sections=sections,
    )


@lru_cache(maxsize=4)
def _load(directory: str) -> tuple[Card, ...]:
    cards = tuple(parse_card(p.read_text(encoding="utf-8"), p) for p in sorted(Path(directory).glob("*.md")))
    ids = [c.id for c in cards]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise CardError(f"duplicate card ids {dupes}")
    return cards


def load_cards(directory: Path | None = None) -> list[Card]:
    """Every card in the library (cached), sorted by file name."""
    return list(_load(str(directory or CARDS_DIR)))


def get_card(card_id: str, directory: Path | None = None) -> Card | None:
    return next((c for c in load_cards(directory) if c.id == card_id), None)


def kernel_path(card: Card) -> Path:
    """The reference kernel's file, resolved against the repository (or the installed package)."""
    rel = Path(card.kernel)
    for base in (REPO_ROOT, Path(__file__).resolve().parent.parent):
        if (base / rel).exists():
            return base / rel
    return REPO_ROOT / rel
