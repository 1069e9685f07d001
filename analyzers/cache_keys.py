"""The kernel cache's keys (cache.py holds the entries): what each kernel's analysis reads,
as the texts its key hashes and the pieces its cached findings move with.

The first level keys a kernel by its own, its launchers', its launchers' autograd `forward`s'
and its helpers' texts (each normalized: layout.py) with the module constants and other files
it reads; the second (`BoundLookup`) by what the launch binding produced, so a launcher edit
that leaves the binding as it was interprets nothing.
"""

from __future__ import annotations

import re

from argus.analyzers.cache import KernelCache, cache_key
from argus.analyzers.compile_time import compile_time_nodes
from argus.analyzers.findings import Finding
from argus.analyzers.frontend.queries import KernelSite, launch_calls
from argus.analyzers.host_sources import plain_definitions
from argus.analyzers.layout import Piece, Unmappable, move_findings, piece_of
from argus.analyzers.model.binder_ctx import forward_node
from argus.analyzers.model.launch_file import RecordedLaunch
from argus.analyzers.module_view import ModuleView
from argus.analyzers.rule_reads import Read, read_alike
from tree_sitter import Node


def kernel_key(
    view: ModuleView, site: KernelSite, launchers: list[Node], recorded: list[RecordedLaunch]
) -> tuple[str, list[Piece]]:
    """The key holds what the kernel's analysis reads, each piece relative to itself and without
    its trailing blanks and blank lines (layout.py): an edit elsewhere, one that only moves the
    kernel or any of its launchers or helpers, or one that only opens a line or adds trailing
    blanks, reuses the cached findings, each moved with the piece it points into."""
    forwards = _forward_nodes(launchers)
    helpers = _helper_nodes(view, site)
    nodes = [site.node, *launchers, *forwards, *helpers]
    pieces = [piece_of(view.source, n) for n in nodes]
    key = cache_key(
        *_context_parts(view, site, recorded),
        _module_names_in(view, [site.node, *helpers]),
        # which pieces are launchers, which their autograd forwards and which helpers
        f"{len(launchers)} {len(forwards)}".encode(),
        *[text + b"@" + str(n.start_point[1]).encode() for (text, _), n in zip(pieces, nodes, strict=True)],
    )
    return key, [p for _, p in pieces]


_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _module_names_in(view: ModuleView, nodes: list[Node]) -> bytes:
    """Which identifiers of the kernel's and its helpers' text the module binds: its constants,
    imports, kernels and top-level functions. Whether a name the kernel reads is bound decides
    AR002 against AR001 (pipeline.py's unbound-name check), and a rename of a host function
    (`def pick` -> `def pickq`) changes no text the rest of the key holds: without this part the
    cached AR001 outlived the rename. The names come from tree-sitter's tree, which stays whole
    around a syntax error elsewhere (the full binding set needs a parse of the module, and a
    half-typed line would then change every kernel's key); a superset of the names read
    (attributes and strings count too) only costs a re-check when one of them is defined or
    renamed."""
    bound = view.known_names() | set(plain_definitions(view))
    words = {w.decode() for n in nodes for w in _IDENTIFIER.findall(view.source[n.start_byte : n.end_byte])}
    return " ".join(sorted(words & bound)).encode()


def _forward_nodes(launchers: list[Node]) -> list[Node]:
    """The `forward` beside each launcher in an autograd class, where it is not a launcher
    itself: a backward's binding reads it (model/binder_ctx.py), so findings may point into it
    and the key holds its normalized text as one more piece, which they move with."""
    out: list[Node] = []
    for node in launchers:
        fwd = forward_node(node)
        if fwd is None or any(_within(fwd, n) for n in [*launchers, *out]):
            continue
        out.append(fwd)
    return out


def _within(inner: Node, outer: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _helper_nodes(view: ModuleView, site: KernelSite) -> list[Node]:
    helpers = view.reachable_helpers(site)
    nodes = [h.node for h in view.sites if h is not site and h.name in helpers]
    roots = [site.function, *(h.function for h in view.sites if h.name in helpers)]
    return nodes + list(compile_time_nodes(view, roots).values())  # `@tl.constexpr` functions


def _context_parts(
    view: ModuleView, site: KernelSite, recorded: list[RecordedLaunch], bound: bool = False
) -> list[bytes]:
    """What a kernel's analysis reads besides its own, its helpers' and its launchers' text.
    `bound`: for BoundLookup's key, which leaves out what the file's launchers' host code reads
    (the host functions they call, an autograd `forward`): the binding is all the
    interpretation reads of it (the fingerprint holds that), what the rules read of host code
    is recorded and asked again (rule_reads.py), and a finding pointing into host code is never
    reused (BoundLookup.get)."""
    # other files' helpers and launches: an edit there re-checks
    foreign = view.foreign_texts(site, launchers=not bound)
    return [
        *[p.encode() + b"\0" + text for p, text in sorted(foreign.items())],
        view.const_text,
        repr(recorded).encode(),
    ]


class BoundLookup:
    """The second level of the kernel cache: findings keyed by what the launch binding produced
    (`ProbeRun.fingerprint`: every probe's arguments, sizes, grid, constexprs and notes) rather
    than by the launchers' text and the host code they read, so an edit in host code that
    leaves the kernel's binding as it was re-interprets nothing.

    The key still holds the kernel's and its helpers' text and the text of each of the kernel's
    launch calls (`kernel[grid](...)`: findings point into the grid, and messages quote it).
    What the rules read of host code (rule_reads.py) is kept with the findings and asked again
    on the current text; a cached finding that points anywhere outside those pieces (a
    launcher, the host functions it calls) cannot be moved over an edit there: the kernel is
    then analyzed again."""

    def __init__(
        self, cache: KernelCache, view: ModuleView, site: KernelSite, recorded: list[RecordedLaunch]
    ):
        launchers = view.launcher_nodes(site.name)
        calls = [c for node in launchers for name, c in launch_calls(node) if name == site.name]
        nodes = [site.node, *calls, *_helper_nodes(view, site)]
        pieces = [piece_of(view.source, n) for n in nodes]
        self.cache = cache
        self.source = view.source
        self.pieces = [p for _, p in pieces]
        self.parts = [
            b"bound",
            *_context_parts(view, site, recorded, bound=True),
            str(len(calls)).encode(),
            *[
                text + b"@" + str(n.start_point[1]).encode()
                for (text, _), n in zip(pieces, nodes, strict=True)
            ],
        ]
        self.key = ""

    def get(self, fingerprint: str) -> list[Finding] | None:
        self.key = cache_key(*self.parts, fingerprint.encode())
        cached = self.cache.get_bound(self.key)
        if cached is None:
            return None
        found, old, reads = cached
        if _outside(found, old) or not read_alike(reads, self.source):
            return None
        try:
            return move_findings(found, old, self.pieces)
        except Unmappable:
            return None

    def put(self, findings: list[Finding], reads: list[Read]) -> None:
        if self.key:
            self.cache.put(self.key, (findings, self.pieces, list(reads)))


def _outside(findings: list[Finding], pieces: list[Piece]) -> bool:
    """Whether a finding points outside the kernel, its launch calls and its helpers (into
    launcher or other host code, whose text the second level's key does not hold)."""
    for f in findings:
        offsets = [f.span.start_byte, *(r.span.start_byte for r in f.related)]
        if f.fix is not None:
            offsets += [e.start_byte for e in f.fix.edits]
        if not all(any(p.holds(at) for p in pieces) for at in offsets):
            return True
    return False


def cached_findings(cached: object, pieces: list[Piece]) -> list[Finding] | None:
    """The cached findings placed in the current text; None when there are none to reuse or
    one of them points into bytes the edit changed (the kernel is then analyzed again)."""
    if cached is None:
        return None
    found, old = cached  # type: ignore[misc]
    try:
        return move_findings(found, old, pieces)
    except Unmappable:
        return None
