"""Real Triton files for the latency benchmark, and the edits replayed on them.

The files come from two pinned wheels, downloaded once with pip into benchmarks/.realworld/
(git-ignored; nothing of them is committed): the five largest files with a `@triton.jit` kernel of
each package, among those of at most 1,450 lines (the range of the issue's measurement).

Edits are what a person does while working on a kernel file, each typed and then undone, so the
file stays the same over the run: a character appended to a line inside a kernel body, a new line
opened inside a kernel body (which moves everything below it), and the same two in launcher code
(a Python function that launches a kernel, `kernel[grid](...)`). A fifth kind, `kernel-token`,
types a letter at the end of a name read in an expression inside a kernel body (`x = a + b` becomes
`x = a + bq`, then back): the kernel's text changes, so it is analyzed again, which the blanks and
new lines of the other kinds never cause. `launcher-token` does the same in launcher code: the
launcher's text changes, and its kernels are interpreted again only where the binding they get
changed (the name typed into is undefined then: an edit on a line the launch reads changes it, one
on a line it does not read does not). These edits are drawn from their own random streams and
placed among the others, so the edits of the other four kinds stay those of earlier runs.
"""

from __future__ import annotations

import keyword
import random
import re
from dataclasses import dataclass
from pathlib import Path

from argus.analyzers import list_kernels
from argus.analyzers.frontend.parse import parse
from argus.analyzers.frontend.queries import launch_calls
from realworld_fetch import PINS, download, unpack_sources

HERE = Path(__file__).resolve().parent
STORE = HERE / ".realworld"  # the same folder and layout as the checker's real-world benchmark
PACKAGES = ("liger-kernel", "fla-core")  # pinned (version, hash) in realworld_fetch.PINS
MAX_LINES = 1450
PER_PACKAGE = 5


def fetch() -> list[Path]:
    """The pinned wheels' .py files unpacked under STORE/src (downloaded with pip into
    STORE/wheels on first use, hash-checked on every run), as realworld.py keeps them."""
    pins = [p for p in PINS if p.name in PACKAGES]
    return [unpack_sources(download(pin, STORE / "wheels"), STORE / "src") for pin in pins]


def pick_files() -> list[Path]:
    out = []
    for root in fetch():
        sized = []
        for path in sorted(root.rglob("*.py")):
            text = path.read_bytes()
            lines = text.count(b"\n")
            if b"triton.jit" in text and lines <= MAX_LINES:
                sized.append((lines, str(path), path))
        sized.sort(key=lambda t: (-t[0], t[1]))
        out += [p for _, _, p in sized[:PER_PACKAGE]]
    return out


@dataclass(frozen=True)
class Edit:
    """Type `text` at (line, col) and then undo it: two didChange notifications."""

    kind: str  # {kernel,launcher}-{char,newline,token}
    line: int
    col: int
    text: str


def _code_lines(lines: list[str], start: int, end: int) -> list[int]:
    """Lines in [start, end) with a statement (not blank, not a comment, not a decorator or def)."""
    out = []
    for i in range(start, min(end, len(lines))):
        s = lines[i].strip()
        if s and not s.startswith(("#", "@", "def ", '"', "'")) and not s.endswith(("\\", ",", "(", "[")):
            out.append(i)
    return out


def regions(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(kernel body line ranges, launcher function line ranges), 0-based, end exclusive."""
    kernels = [(k.span.start_point[0], k.span.end_point[0] + 1) for k in list_kernels(text)]
    tree = parse(text.encode())
    launchers = set()
    for _, call in launch_calls(tree.root_node):
        node = call
        while node.parent is not None and node.type != "function_definition":
            node = node.parent
        if node.type == "function_definition":
            launchers.add((node.start_point[0], node.end_point[0] + 1))
    inside = [(s, e) for s, e in launchers if not any(ks <= s < ke for ks, ke in kernels)]
    return kernels, sorted(inside)


def edits_for(text: str, per_kind: int, seed: int) -> list[Edit]:
    rng = random.Random(seed)
    lines = text.split("\n")
    kernels, launchers = regions(text)
    out: list[Edit] = []
    for where, kind in ((kernels, "kernel"), (launchers, "launcher")):
        candidates = [i for s, e in where for i in _code_lines(lines, s + 1, e)]
        if not candidates:
            continue
        for _ in range(per_kind):
            row = rng.choice(candidates)
            out.append(Edit(f"{kind}-char", row, len(lines[row]), " "))
        for _ in range(per_kind):
            row = rng.choice(candidates)
            indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
            out.append(Edit(f"{kind}-newline", row, len(lines[row]), "\n" + indent))
    rng.shuffle(out)
    for where, kind in ((kernels, "kernel"), (launchers, "launcher")):
        tokens = random.Random(f"{kind}-token-{seed}")
        for row, col in token_spots(lines, where, per_kind, tokens):
            out.insert(tokens.randrange(len(out) + 1), Edit(f"{kind}-token", row, col, "q"))
    return out


_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?![\w(])")
_KEYWORDS = frozenset(keyword.kwlist) | {"tl", "triton", "torch"}


def token_spots(
    lines: list[str], regions: list[tuple[int, int]], count: int, rng: random.Random
) -> list[tuple[int, int]]:
    """(line, col) just after a name read on the right of an assignment in one of `regions`: a
    letter typed there changes a token (the name), as typing in an expression does."""
    spots = []
    for s, e in regions:
        for i in _code_lines(lines, s + 1, e):
            line = lines[i]
            eq = re.search(r"(?<![=!<>])=(?!=)", line)
            if eq is None or "#" in line[: eq.start()]:
                continue
            for m in _NAME.finditer(line, eq.end()):
                if m.group() not in _KEYWORDS and "#" not in line[: m.start()]:
                    spots.append((i, m.end()))
    return [rng.choice(spots) for _ in range(count)] if spots else []


def identifiers_in_kernels(text: str, count: int, seed: int) -> list[tuple[int, int]]:
    """(line, col) of names inside kernel bodies, for hover."""
    rng = random.Random(seed)
    lines = text.split("\n")
    kernels, _ = regions(text)
    spots = []
    for s, e in kernels:
        for i in _code_lines(lines, s + 1, e):
            stripped = lines[i].lstrip()
            name = stripped.split("=")[0].strip()
            if name.isidentifier():
                spots.append((i, len(lines[i]) - len(stripped)))
    rng.shuffle(spots)
    return spots[:count]
